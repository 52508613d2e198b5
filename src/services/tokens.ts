// JWT bearer tokens: ES512 signatures with a key pair kept in the metadata store, revocation by
// a per-user token version (claim v) and by replacing the key pair.
import { randomUUID } from 'node:crypto';
import { errors, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
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

export class TokenService {
  private key!: LoadedKey;
  private lastReload = 0;
  private lastKeyCheck = Date.now();
  // An ES512 verification costs ~1.3 ms of CPU; a token already verified is remembered briefly
  // (signature and claims only: the user's token version is still checked on every request).
  private readonly verified = new LRUCache<string, VerifiedToken & { kid: string }>({ max: 10_000, ttl: VERIFIED_TTL_MS });

  private readonly resetListeners = new Set<() => void>();

  constructor(private readonly settings: SettingsRepository) {}

  /** Told when resetKeys() made every token invalid (live connections close); returns the unsubscriber. */
  onKeysReset(listener: () => void): () => void {
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

  /** Checks signature, expiry and claims; the caller checks uid and v against the user. */
  async verify(token: string): Promise<VerifiedToken> {
    await this.refreshKeyIfStale();
    const hit = this.verified.get(token);
    if (hit && hit.kid === this.key.kid) {
      if (hit.expiry <= Date.now()) throw DomainError.unauthenticated('Token expired');
      return hit;
    }
    const claims = await this.verifySignature(token);
    this.verified.set(token, { ...claims, kid: this.key.kid });
    return claims;
  }

  private async verifySignature(token: string): Promise<VerifiedToken> {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, async (header) => this.publicKeyFor(header.kid), {
        algorithms: [ALG],
      });
      if (protectedHeader.kid === undefined) throw invalidToken();
      if (
        payload.typ !== 'auth' ||
        typeof payload.sub !== 'string' ||
        typeof payload.uid !== 'number' ||
        typeof payload.v !== 'number' ||
        typeof payload.exp !== 'number'
      ) {
        throw invalidToken();
      }
      return { username: payload.sub, userId: payload.uid, version: payload.v, expiry: payload.exp * 1000 };
    } catch (err) {
      if (err instanceof DomainError) throw err;
      if (err instanceof errors.JWTExpired) throw DomainError.unauthenticated('Token expired');
      throw invalidToken();
    }
  }

  /** Replaces the signing key: every token issued so far stops working. */
  async resetKeys(): Promise<void> {
    const stored = await newStoredKey();
    await this.settings.put(KEY_SETTING, stored);
    this.key = await load(stored);
    this.verified.clear();
    for (const l of this.resetListeners) {
      try {
        l();
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

  private async publicKeyFor(kid: string | undefined): Promise<CryptoKey> {
    if (kid === this.key.kid) return this.key.publicKey;
    const now = Date.now();
    if (now - this.lastReload > RELOAD_INTERVAL_MS) {
      this.lastReload = now;
      const stored = await this.settings.get<StoredKey>(KEY_SETTING);
      if (stored && stored.kid !== this.key.kid) this.key = await load(stored);
      if (kid === this.key.kid) return this.key.publicKey;
    }
    throw invalidToken();
  }
}
