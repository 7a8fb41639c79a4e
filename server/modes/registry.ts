// The mode registry (req C2): every collaboration mode by name, and a config checked against
// a mode — zod first (the field named), then the mode's own static checks.
import { AppError } from "../errors";
import { expertRouting } from "./expert-routing";
import { freeDiscussion } from "./free-discussion";
import { sop } from "./sop";
import type { CollaborationMode, ModeContext } from "./types";
import { voting } from "./voting";

export const DEFAULT_MODE = "free_discussion";

export const MODES: Record<string, CollaborationMode<never>> = Object.fromEntries(
  [freeDiscussion, sop, voting, expertRouting].map((m) => [m.name, m as unknown as CollaborationMode<never>]),
);

export function listModes(): Array<{ name: string; description: string }> {
  return Object.values(MODES).map((m) => ({ name: m.name, description: m.description }));
}

/** The mode and its config, checked: INVALID_INPUT naming the mode or the field otherwise. */
export function resolveMode(name: string, rawConfig: unknown, ctx: ModeContext): { mode: CollaborationMode<unknown>; config: unknown } {
  const mode = MODES[name] as CollaborationMode<unknown> | undefined;
  if (!mode) {
    const message = `no mode "${name}" (modes: ${Object.keys(MODES).join(", ")})`;
    throw new AppError("INVALID_INPUT", message, { field: "mode", fieldErrors: { mode: [message] } });
  }
  const parsed = mode.config.safeParse(rawConfig ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `modeConfig.${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new AppError("INVALID_INPUT", problems.join("; "), { field: "modeConfig", problems, fieldErrors: { modeConfig: problems } });
  }
  const problems = mode.validate(parsed.data, ctx).map((p) => `modeConfig.${p}`);
  if (problems.length) {
    throw new AppError("INVALID_INPUT", problems.join("; "), { field: "modeConfig", problems, fieldErrors: { modeConfig: problems } });
  }
  return { mode, config: parsed.data };
}
