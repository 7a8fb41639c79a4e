"use server";
// The setup form's server action: consumes the one-time token and creates the first admin
// (server/auth/setup.ts checks everything; the arguments come from the browser).
import { toRestError, type FieldErrors } from "@/server/api/errors";
import { completeSetup } from "@/server/auth/setup";
import { getPrisma } from "@/server/db/prisma";
import { logger } from "@/server/log";

export type SetupResult = { ok: true; email: string } | { ok: false; message: string; fieldErrors?: FieldErrors };

export async function createFirstAdmin(input: { token: string; email: string; name: string; password: string }): Promise<SetupResult> {
  try {
    const user = await completeSetup(getPrisma(), input);
    logger.info({ userId: user.id }, "setup: first admin created");
    return { ok: true, email: user.email };
  } catch (err) {
    const { body, internal } = toRestError(err);
    if (internal) logger.error({ err }, "setup: creating the first admin failed");
    return { ok: false, message: body.error.message, ...(body.error.fieldErrors ? { fieldErrors: body.error.fieldErrors } : {}) };
  }
}
