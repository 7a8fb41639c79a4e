// Password hashing: argon2id (@node-rs/argon2 defaults: 19 MiB, 2 passes, 1 lane — the
// OWASP recommendation). Verification takes the same time whether or not the account
// exists, so sign-in timing does not reveal which emails are registered.
import { hash, verify } from "@node-rs/argon2";
import { z } from "zod";

export const PASSWORD_MIN_LENGTH = 10;

export const ZPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `at least ${PASSWORD_MIN_LENGTH} characters`)
  // Long enough for any passphrase, short enough that hashing cannot be used to burn CPU.
  .max(256, "at most 256 characters");

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** A hash of a random password, computed once: verified against when there is no user. */
let dummyHash: Promise<string> | undefined;

/**
 * Whether `password` matches `passwordHash`. With no hash (unknown user, or a user who
 * only signs in through a provider) it still runs one verification and answers false.
 */
export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  if (!passwordHash) {
    dummyHash ??= hash(crypto.randomUUID());
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    // A malformed stored hash is a failed sign-in, not a crash of the sign-in endpoint.
    return false;
  }
}
