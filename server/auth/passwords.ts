// Password hashing: argon2id (@node-rs/argon2 defaults: 19 MiB, 2 passes, 1 lane — the
// OWASP recommendation). Verification takes the same time whether or not the account
// exists, so sign-in timing does not reveal which emails are registered.
import { hash, verify } from "@node-rs/argon2";
import { z } from "zod";

export const PASSWORD_MIN_LENGTH = 10;

/** The most common passwords of 10 characters or more (leaked-password lists), compared lower-cased. */
const COMMON_PASSWORDS = new Set([
  "1234567890",
  "12345678910",
  "123456789a",
  "0987654321",
  "1q2w3e4r5t",
  "1qaz2wsx3edc",
  "qwertyuiop",
  "qwerty1234",
  "qwerty12345",
  "qwertyuiop123",
  "password12",
  "password123",
  "password1234",
  "password1!",
  "passw0rd123",
  "p@ssw0rd123",
  "iloveyou12",
  "iloveyou123",
  "letmein123",
  "welcome123",
  "welcome1234",
  "changeme123",
  "administrator",
  "admin12345",
  "admin123456",
  "football123",
  "baseball123",
  "sunshine123",
  "princess123",
  "abc1234567",
  "abcd123456",
  "trustno1234",
]);

/** Keyboard rows and the alphabet, forwards: a run along one of them is not a password. */
const SEQUENCES = ["abcdefghijklmnopqrstuvwxyz", "01234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"];

/** Why `password` is too easy to guess although long enough, or null. */
export function weakPasswordReason(password: string): string | null {
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) return "is one of the most common passwords";
  if (new Set(lower).size === 1) return "repeats one character";
  const runOf = (text: string) => SEQUENCES.some((seq) => seq.includes(text) || [...seq].reverse().join("").includes(text));
  if (runOf(lower)) return "is a run of consecutive characters";
  return null;
}

export const ZPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `at least ${PASSWORD_MIN_LENGTH} characters`)
  // Long enough for any passphrase, short enough that hashing cannot be used to burn CPU.
  .max(256, "at most 256 characters")
  .superRefine((password, ctx) => {
    const weak = weakPasswordReason(password);
    if (weak) ctx.addIssue({ code: "custom", message: `too easy to guess: it ${weak}` });
  });

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
