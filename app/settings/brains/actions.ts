"use server";
// The brains page's Check button: calls `settings.checkBrain` as the visitor (operator or
// admin; the procedure checks), and hands back a plain result for the button to show.
import type { BrainCheckOutcome, TCheckBrainInput } from "@/server/projects/brains";
import { signedInPage } from "../../_lib/page-context";

export async function checkBrainAction(input: TCheckBrainInput): Promise<BrainCheckOutcome> {
  const { caller } = await signedInPage("/settings/brains");
  try {
    const { brain: _brain, ...result } = await caller.settings.checkBrain(input);
    return { ok: true, result };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
