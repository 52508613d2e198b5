// Password hashing: argon2id (memory-hard), parameters from OWASP's recommendation.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Algorithm, hash, verify } from '@node-rs/argon2';

const options = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Is `text` the stored hash itself (compared in time independent of where they differ)? */
export function isSameHash(passwordHash: string, text: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(passwordHash), digest(text)) && passwordHash.length === text.length;
}

/** A hash of a random password, verified against when the username is unknown so timing does not tell. */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(`decoy-${Math.random()}-${Date.now()}`);
  return decoyHash;
}
