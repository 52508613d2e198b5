// JWT bearer tokens: ES512 signatures with a key pair kept in the metadata store, revocation by
// a per-user token version (claim v) and by replacing the key pair.
import { randomUUID } from 'node:crypto';
import {
  decodeJwt,
  decodeProtectedHeader,
  errors,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { DomainError } from '../core/errors.js';
import type { SettingsRepository } from '../store/metadata/settings.js';

const ALG = 'ES512';
const KEY_SETTING = 'jwt.signingKey';
// When a token names a key we do not hold, another instance may have reset the keys; look again
// at most this often so forged kids cannot hammer the store.
const RELOAD_INTERVAL_MS = 5_000;
const KEY_CHECK_INTERVAL_MS = 30_000;
const VERIFIED_TTL_MS = 30_000;
// Ours are ~400 characters; a bigger one is not worth parsing.
const MAX_TOKEN_CHARS = 4096;
// An ES512 signature is two 66-byte integers (132 bytes): 176 base64url characters.
const ES512_SIGNATURE_CHARS = Math.ceil((132 * 4) / 3);
const BASE64URL = /^[A-Za-z0-9_-]+$/;

interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

interface LoadedKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export interface VerifiedToken {
  username: string;
  /** The id of the account the token was issued to: a later account of the same name is another user. */
  userId: number;
  version: number;
  expiry: number;
}

async function newStoredKey(): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = randomUUID();
  return { kid, privateJwk: await exportJWK(privateKey), publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' } };
}

async function load(stored: StoredKey): Promise<LoadedKey> {
  return {
    kid: stored.kid,
    privateKey: (await importJWK(stored.privateJwk, ALG)) as CryptoKey,
    publicKey: (await importJWK(stored.publicJwk, ALG)) as CryptoKey,
    publicJwk: stored.publicJwk,
  };
}

const invalidToken = () => DomainError.unauthenticated('Invalid token');
const expiredToken = () => DomainError.unauthenticated('Token expired');

interface AuthClaims extends JWTPayload {
  typ: 'auth';
  sub: string;
  uid: number;
  v: number;
  exp: number;
}

function isAuthClaims(p: JWTPayload): p is AuthClaims {
  return p.typ === 'auth' && typeof p.sub === 'string' && typeof p.uid === 'number' && typeof p.v === 'number' && typeof p.exp === 'number';
}

/**
 * Everything that can be refused without the signature, at the cost of two small JSON parses: size,
 * shape, algorithm, signature length, claim types and expiry. Returns the key id the token names.
 */
function precheck(token: string, now: number): string {
  if (token.length > MAX_TOKEN_CHARS) throw invalidToken();
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) throw invalidToken();
  if (parts[2]!.length !== ES512_SIGNATURE_CHARS) throw invalidToken();
  let kid: unknown;
  let claims: JWTPayload;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== ALG) throw invalidToken();
    kid = header.kid;
    claims = decodeJwt(token);
  } catch {
    throw invalidToken();
  }
  if (typeof kid !== 'string' || !isAuthClaims(claims)) throw invalidToken();
  if (claims.exp * 1000 <= now) throw expiredToken();
  return kid;
}

export class TokenService {
  private key!: LoadedKey;
  private lastReload = 0;
  private lastKeyCheck = Date.now();
  // An ES512 verification costs ~1.3 ms of CPU; a token already verified is remembered briefly
  // (signature and claims only: the user's token version is still checked on every request).
  private readonly verified = new LRUCache<string, VerifiedToken & { kid: string }>({ max: 10_000, ttl: VERIFIED_TTL_MS });

  private readonly resetListeners = new Set<(local: boolean) => void>();
  private verifications = 0;

  constructor(private readonly settings: SettingsRepository) {}

  /**
   * Told when resetKeys() made every token invalid (live connections close); `local`: the reset was made
   * through this instance. Returns the unsubscriber.
   */
  onKeysReset(listener: (local: boolean) => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  async init(): Promise<void> {
    const stored = await this.settings.putIfAbsent(KEY_SETTING, await newStoredKey());
    this.key = await load(stored);
  }

  publicJwk(): JWK {
    return this.key.publicJwk;
  }

  async create(username: string, userId: number, version: number, expiry: number): Promise<string> {
    return new SignJWT({ typ: 'auth', v: version, uid: userId })
      .setProtectedHeader({ alg: ALG, kid: this.key.kid })
      .setSubject(username)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiry / 1000))
      .sign(this.key.privateKey);
  }

  /** Signature verifications so far (each ~1.3–2.7 ms of CPU); /metrics reports it. */
  get signatureVerifications(): number {
    return this.verifications;
  }

  /**
   * Checks signature, expiry and claims; the caller checks uid and v against the user. A token
   * verified lately is answered from memory; any other is prechecked (precheck()), and
   * `beforeCostlyCheck` may still refuse it before its signature is verified.
   */
  async verify(token: string, beforeCostlyCheck?: () => void): Promise<VerifiedToken> {
    await this.refreshKeyIfStale();
    const hit = this.verified.get(token);
    if (hit && hit.kid === this.key.kid) {
      if (hit.expiry <= Date.now()) throw expiredToken();
      return hit;
    }
    const key = await this.publicKeyFor(precheck(token, Date.now()));
    beforeCostlyCheck?.();
    const claims = await this.verifySignature(token, key.publicKey);
    this.verified.set(token, { ...claims, kid: key.kid });
    return claims;
  }

  private async verifySignature(token: string, publicKey: CryptoKey): Promise<VerifiedToken> {
    this.verifications += 1;
    try {
      const { payload } = await jwtVerify(token, publicKey, { algorithms: [ALG] });
      if (!isAuthClaims(payload)) throw invalidToken();
      return { username: payload.sub, userId: payload.uid, version: payload.v, expiry: payload.exp * 1000 };
    } catch (err) {
      if (err instanceof DomainError) throw err;
      if (err instanceof errors.JWTExpired) throw expiredToken();
      throw invalidToken();
    }
  }

  /** A token's protected header and claims as it carries them (no check: verify it first). */
  contents(token: string): { header: Record<string, unknown>; body: Record<string, unknown> } {
    return { header: { ...decodeProtectedHeader(token) }, body: { ...decodeJwt(token) } };
  }

  /** Replaces the signing key: every token issued so far stops working. */
  async resetKeys(): Promise<void> {
    const stored = await newStoredKey();
    await this.settings.put(KEY_SETTING, stored);
    this.key = await load(stored);
    this.verified.clear();
    this.tellReset(true);
  }

  /** Another instance reset the keys: take the stored key now, and end what the old one allowed. */
  async keysResetElsewhere(): Promise<void> {
    const stored = await this.settings.get<StoredKey>(KEY_SETTING);
    if (stored && stored.kid !== this.key.kid) this.key = await load(stored);
    this.verified.clear();
    this.tellReset(false);
  }

  private tellReset(local: boolean): void {
    for (const l of this.resetListeners) {
      try {
        l(local);
      } catch {
        // listeners report their own failures
      }
    }
  }

  /** Another instance may have reset the keys: look at the stored key now and then. */
  private async refreshKeyIfStale(): Promise<void> {
    const now = Date.now();
    if (now - this.lastKeyCheck < KEY_CHECK_INTERVAL_MS) return;
    this.lastKeyCheck = now;
    const stored = await this.settings.get<StoredKey>(KEY_SETTING);
    if (stored && stored.kid !== this.key.kid) {
      this.key = await load(stored);
      this.verified.clear();
    }
  }

  /** The key a token names: ours, or, when another instance reset the keys, the stored one (looked up at most every 5 s). */
  private async publicKeyFor(kid: string): Promise<LoadedKey> {
    if (kid === this.key.kid) return this.key;
    const now = Date.now();
    if (now - this.lastReload > RELOAD_INTERVAL_MS) {
      this.lastReload = now;
      const stored = await this.settings.get<StoredKey>(KEY_SETTING);
      if (stored && stored.kid !== this.key.kid) {
        this.key = await load(stored);
        this.verified.clear();
      }
      if (kid === this.key.kid) return this.key;
    }
    throw invalidToken();
  }
}
