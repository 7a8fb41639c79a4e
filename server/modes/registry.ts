// The mode registry (req C2): every collaboration mode by name, and a config checked against
// a mode — zod first (the field named), then the mode's own static checks.
//
// Typed end to end: each mode's parsed config and own state are declared by name
// (ModeConfigs, ModeCustomStates), the registry holds each mode under its own name, and a
// conversation keeps its mode's name, config and state together (ModeSlot), so a mode is
// only ever called with its own config and state. The slot is plain JSON data (a folded
// conversation is stored as a snapshot); the mode it names is looked up here when it is asked.
import { AppError } from "../errors";
import { expertRouting, type ExpertRoutingConfig } from "./expert-routing";
import { freeDiscussion, type FreeDiscussionConfig } from "./free-discussion";
import { sop, type SopConfig, type SopCustomState } from "./sop";
import type { CollaborationMode, ModeContext, ModeDecision, ModeState, NoCustomState } from "./types";
import { voting, type VotingConfig, type VotingCustomState } from "./voting";

/** Each mode's config once parsed, by mode name. */
export interface ModeConfigs {
  free_discussion: FreeDiscussionConfig;
  sop: SopConfig;
  voting: VotingConfig;
  expert_routing: ExpertRoutingConfig;
}

/** Each mode's own state (ModeState.custom), by mode name. */
export interface ModeCustomStates {
  free_discussion: NoCustomState;
  sop: SopCustomState;
  voting: VotingCustomState;
  expert_routing: NoCustomState;
}

export type ModeName = keyof ModeConfigs;

/** Every mode under its own name (the key is the mode's `name`, checked by the types). */
export type ModeRegistry = { readonly [K in ModeName]: CollaborationMode<ModeConfigs[K], ModeCustomStates[K], K> };

export const DEFAULT_MODE = "free_discussion" satisfies ModeName;

/** In the order they are listed (GET /api/modes, the dashboard's mode picker). */
export const MODES: ModeRegistry = { free_discussion: freeDiscussion, sop, voting, expert_routing: expertRouting };

/** A mode by name and its config, parsed and checked (resolveMode): `{ mode: "sop", config: SopConfig }`, … */
export type ConfiguredMode<K extends ModeName = ModeName> = { [P in K]: { mode: P; config: ModeConfigs[P] } }[K];

/** A mode in force: its name, its config and its own state, of the same mode. */
export type ModeSlot<K extends ModeName = ModeName> = {
  [P in K]: { mode: P; config: ModeConfigs[P]; modeState: ModeState<ModeCustomStates[P]> };
}[K];

export function isModeName(name: string): name is ModeName {
  return Object.hasOwn(MODES, name);
}

/** The registered mode of that name, if any (its description, its name). */
export function findMode(name: string): ModeRegistry[ModeName] | undefined {
  return isModeName(name) ? MODES[name] : undefined;
}

export function listModes(): Array<{ name: string; description: string }> {
  return Object.values(MODES).map((m) => ({ name: m.name, description: m.description }));
}

/** The mode and its config, checked: INVALID_INPUT naming the mode or the field otherwise. */
export function resolveMode(name: string, rawConfig: unknown, ctx: ModeContext): ConfiguredMode {
  if (!isModeName(name)) {
    const message = `no mode "${name}" (modes: ${Object.keys(MODES).join(", ")})`;
    throw new AppError("INVALID_INPUT", message, { field: "mode", fieldErrors: { mode: [message] } });
  }
  return configure(name, rawConfig, ctx);
}

function configure<K extends ModeName>(name: K, rawConfig: unknown, ctx: ModeContext): ConfiguredMode<K> {
  const mode = MODES[name];
  const parsed = mode.config.safeParse(rawConfig ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `modeConfig.${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new AppError("INVALID_INPUT", problems.join("; "), { field: "modeConfig", problems, fieldErrors: { modeConfig: problems } });
  }
  const problems = mode.validate(parsed.data, ctx).map((p) => `modeConfig.${p}`);
  if (problems.length) {
    throw new AppError("INVALID_INPUT", problems.join("; "), { field: "modeConfig", problems, fieldErrors: { modeConfig: problems } });
  }
  return { mode: name, config: parsed.data };
}

/** The mode put in force with its config: its initial state. */
export function startMode<K extends ModeName>(configured: ConfiguredMode<K>): ModeSlot<K> {
  return { mode: configured.mode, config: configured.config, modeState: registeredMode(configured.mode).initialize(configured.config) };
}

/**
 * Asks the slot's mode one of its decisions (`ask` calls it) with the slot's own config and
 * state: the decision, and the slot with the mode's next state. `ask` is generic in the
 * config and the state, so it cannot give a mode another mode's.
 */
export function askMode<K extends ModeName>(
  slot: ModeSlot<K>,
  ask: <C, S>(mode: CollaborationMode<C, S>, config: C, state: ModeState<S>) => ModeDecision<S>,
): { decision: ModeDecision<ModeCustomStates[K]>; slot: ModeSlot<K> } {
  const decision = ask(registeredMode(slot.mode), slot.config, slot.modeState);
  return { decision, slot: { mode: slot.mode, config: slot.config, modeState: decision.state } };
}

/**
 * The mode of that name. A slot's name was checked when its mode was put in force; a state
 * read back from a snapshot can still name a mode no longer registered: said as such.
 */
export function registeredMode<K extends ModeName>(name: K): ModeRegistry[K] {
  const mode: ModeRegistry[K] | undefined = MODES[name];
  if (!mode) throw new AppError("INTERNAL", `the conversation is in mode "${name}", which is not registered`);
  return mode;
}
