"use server";
// The invitation form's server action: accepts the invitation through the same procedure the
// API serves (server/auth/invitations.ts checks everything; the arguments come from the browser).
import { TRPCError } from "@trpc/server";
import { visitor } from "@/app/_lib/page-context";
import { toRestError, type FieldErrors } from "@/server/api/errors";
import { logger } from "@/server/log";

export type AcceptResult = { ok: true; email: string } | { ok: false; message: string; fieldErrors?: FieldErrors };

export async function acceptInvitationAction(input: {
  token: string;
  email: string;
  name: string;
  password: string;
}): Promise<AcceptResult> {
  try {
    const { caller } = await visitor();
    const user = await caller.invitations.accept(input);
    logger.info({ userId: user.id, role: user.role }, "invitation: accepted");
    return { ok: true, email: user.email };
  } catch (err) {
    const { body, internal } = toRestError(err instanceof TRPCError && err.cause ? err.cause : err);
    if (internal) logger.error({ err }, "invitation: accepting failed");
    return { ok: false, message: body.error.message, ...(body.error.fieldErrors ? { fieldErrors: body.error.fieldErrors } : {}) };
  }
}
