// The typed mode registry (server/modes/registry.ts): every mode under its own name, a mode
// asked only with its own config and state, and a conversation's state plain JSON data that
// folds on the same after a round trip (a snapshot). The `@ts-expect-error` lines are
// checked by `npm run typecheck`: each says a mix-up the types refuse, and fails the check
// if the types ever let it through.
import { describe, expect, it } from "vitest";
import {
  decideConversation,
  evolveConversation,
  foldConversation,
  type ConversationCommand,
  type ConversationEvent,
  type ConversationState,
} from "../../server/modes/conversation";
import { askMode, findMode, isModeName, MODES, resolveMode, startMode } from "../../server/modes/registry";
import type { ConversationAgent } from "../../server/modes/types";
import { voting } from "../../server/modes/voting";

const AGENTS: ConversationAgent[] = [
  { id: "ada", name: "Ada", skills: ["database"] },
  { id: "bo", name: "Bo", skills: ["css"], weight: 2 },
];

/** The events of these commands, each decided on the state the previous ones left. */
function run(commands: ConversationCommand[]): ConversationEvent[] {
  let n = 0;
  const ctx = { newId: () => `c${++n}` };
  const events: ConversationEvent[] = [];
  for (const command of commands) events.push(...decideConversation(foldConversation(events), command, ctx));
  return events;
}

const ballot = (choice: string) => JSON.stringify({ choice, rationale: "because", confidence: 0.5 });

describe("the mode registry", () => {
  it("holds each mode under its own name; a name is a mode's only when registered", () => {
    expect(Object.entries(MODES).map(([name, mode]) => [name, mode.name])).toEqual([
      ["free_discussion", "free_discussion"],
      ["sop", "sop"],
      ["voting", "voting"],
      ["expert_routing", "expert_routing"],
    ]);
    expect(isModeName("voting")).toBe(true);
    expect(isModeName("debate")).toBe(false);
    expect(isModeName("toString")).toBe(false);
    expect(findMode("sop")?.description).toMatch(/^SOP/);
    expect(findMode("debate")).toBeUndefined();
  });

  it("resolves a mode with its config parsed (defaults in) and starts it from its initial state", () => {
    const configured = resolveMode("voting", { quorum: 2 }, { agents: AGENTS });
    expect(configured).toEqual({ mode: "voting", config: { quorum: 2, weights: {}, timeoutMs: 120_000 } });
    if (configured.mode !== "voting") throw new Error("resolved another mode");
    // Narrowed by its name, the config is the mode's own.
    expect(configured.config.quorum).toBe(2);
    expect(startMode(configured)).toEqual({ ...configured, modeState: { currentStep: null, stepHistory: [], custom: {} } });
  });

  it("asks a mode with its own config and state, and gives back the slot with its next state", () => {
    const slot = startMode(resolveMode("voting", { quorum: 1 }, { agents: AGENTS }));
    const asked = askMode(slot, (mode, config, state) =>
      mode.onUserMessage(state, config, { text: "Which index?", mentions: [] }, { agents: AGENTS }),
    );
    expect(asked.decision.calls.map((c) => c.agent)).toEqual(["ada", "bo"]);
    expect(asked.slot).toMatchObject({ mode: "voting", config: slot.config, modeState: { currentStep: "round-1" } });
    expect(asked.slot.modeState).toBe(asked.decision.state);
  });

  it("refuses, in the types, a mode asked with another's config or a state whose config is another mode's", () => {
    const sopConfig = { steps: [{ id: "a", agent: "ada", instruction: "Go." }] };
    const state = foldConversation(run([{ type: "Start", agents: AGENTS, mode: "sop", config: sopConfig }]));
    const message = { text: "hi", mentions: [] };
    // Never called: these say what `npm run typecheck` refuses.
    const mixUps = () => [
      // @ts-expect-error: the state's mode may be any mode; voting's decision takes voting's config only.
      askMode(state, (_mode, config, modeState) => voting.onUserMessage(modeState, config, message, { agents: AGENTS })),
      // @ts-expect-error: a state's own state and config are not voting's until its mode says so.
      MODES.voting.onUserMessage(state.modeState, state.config, message, { agents: AGENTS }),
      // @ts-expect-error: a state in voting carries voting's config, not an SOP's.
      ((mixed: ConversationState) => mixed)({ ...state, mode: "voting" }),
    ];
    expect(mixUps).toBeTypeOf("function");
    // Narrowed by its mode's name, the state's config and own state are that mode's.
    if (state.mode !== "sop") throw new Error(`started in ${state.mode}`);
    expect(state.config.steps.map((s) => s.id)).toEqual(["a"]);
    expect(MODES.sop.onUserMessage(state.modeState, state.config, message, { agents: AGENTS }).calls).toEqual([
      expect.objectContaining({ agent: "ada", caller: "person" }),
    ]);
  });
});

describe("a conversation's state as a snapshot", () => {
  it("is plain JSON: read back, it is the same state and folds on to the same one", () => {
    const events = run([
      { type: "Start", agents: AGENTS, mode: "voting", config: { quorum: 2 } },
      { type: "Post", by: "user:1", text: "Which index?" },
    ]);
    const state = foldConversation(events);
    const snapshot: ConversationState = JSON.parse(JSON.stringify(state));
    expect(snapshot).toEqual(state);
    const rest = run([
      { type: "Start", agents: AGENTS, mode: "voting", config: { quorum: 2 } },
      { type: "Post", by: "user:1", text: "Which index?" },
      { type: "Reply", callId: "c1", text: ballot("btree") },
      { type: "Reply", callId: "c2", text: ballot("hash") },
    ]).slice(events.length);
    expect(rest.reduce(evolveConversation, snapshot)).toEqual(rest.reduce(evolveConversation, state));
    expect(rest.reduce(evolveConversation, snapshot).modeState.custom).toMatchObject({ open: false, round: 1 });
  });

  it("naming a mode no longer registered: asking it is an INTERNAL error that names it", () => {
    const state = foldConversation(run([{ type: "Start", agents: AGENTS }]));
    const snapshot: ConversationState = JSON.parse(JSON.stringify({ ...state, mode: "debate" }));
    expect(() => decideConversation(snapshot, { type: "Post", by: "user:1", text: "@ada hello" }, { newId: () => "c1" })).toThrow(
      expect.objectContaining({ code: "INTERNAL", message: 'the conversation is in mode "debate", which is not registered' }),
    );
  });

  it("an event naming a mode not registered is refused as INVALID_INPUT naming the modes, as at the start", () => {
    expect(() =>
      foldConversation([{ type: "ConversationStarted", data: { mode: "debate", config: {}, agents: AGENTS, stallAfter: 4 } }]),
    ).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT", message: 'no mode "debate" (modes: free_discussion, sop, voting, expert_routing)' }),
    );
  });
});
