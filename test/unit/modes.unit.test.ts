// Collaboration modes (req C1–C6) and the conversation decider, given/when/then: given a
// conversation's events, when a command, then exactly these events or this error. Every mode,
// every transition of its state, the loop guard, termination, the mode switch, and a property
// test: agents that always mention each other stall within K+1 agent turns, over 10,000 seeds.
import { describe, expect, it } from "vitest";
import { AppError } from "../../server/errors";
import {
  decideConversation,
  foldConversation,
  MAX_REPLY_CHARS,
  type ConversationCommand,
  type ConversationEvent,
} from "../../server/modes/conversation";
import { parseMentions } from "../../server/modes/mentions";
import { listModes, resolveMode } from "../../server/modes/registry";
import type { ConversationAgent } from "../../server/modes/types";
import { tally, type Ballot } from "../../server/modes/voting";

const AGENTS: ConversationAgent[] = [
  { id: "ada", name: "Ada", skills: ["database", "sql"] },
  { id: "bo", name: "Bo", skills: ["css", "accessibility"], weight: 2 },
  { id: "cy", name: "Cy", skills: ["security"] },
];

/** A conversation built by commands: each command's events appended, ids counted. */
class Chat {
  events: ConversationEvent[] = [];
  private n = 0;
  readonly ctx = { newId: () => `c${++this.n}` };
  constructor(mode?: string, config?: unknown, stallAfter?: number) {
    this.run({
      type: "Start",
      agents: AGENTS,
      ...(mode ? { mode } : {}),
      ...(config ? { config } : {}),
      ...(stallAfter ? { stallAfter } : {}),
    });
  }
  get state() {
    return foldConversation(this.events);
  }
  run(command: ConversationCommand): ConversationEvent[] {
    const out = decideConversation(this.state, command, this.ctx);
    this.events.push(...out);
    return out;
  }
  /** The call in flight to `agent` (the oldest). */
  callTo(agent: string): string {
    const entry = Object.entries(this.state.inFlight).find(([, c]) => c.agent === agent);
    if (!entry) throw new Error(`no call to ${agent} in flight`);
    return entry[0];
  }
  reply(agent: string, text: string): ConversationEvent[] {
    return this.run({ type: "Reply", callId: this.callTo(agent), text });
  }
}

const calls = (events: ConversationEvent[]) =>
  events.flatMap((e) => (e.type === "AgentCallScheduled" ? [`${e.data.caller}→${e.data.agent}`] : []));
const types = (events: ConversationEvent[]) => events.map((e) => e.type);
const notes = (events: ConversationEvent[]) => events.flatMap((e) => (e.type === "ModeNoted" ? [e.data.note] : []));

describe("mentions", () => {
  it("resolves @id and @name case-insensitively, once each, and returns the unknown ones apart", () => {
    expect(parseMentions("@ada and @BO, then @Ada again; @nobody? mail a@b.c", AGENTS)).toEqual({
      agents: ["ada", "bo"],
      unknown: ["nobody"],
    });
    expect(parseMentions("no mentions here", AGENTS)).toEqual({ agents: [], unknown: [] });
  });
});

describe("the registry and mode configs", () => {
  it("lists the four modes; a conversation starts in free_discussion", () => {
    expect(listModes().map((m) => m.name)).toEqual(["free_discussion", "sop", "voting", "expert_routing"]);
    expect(new Chat().state).toMatchObject({ status: "open", mode: "free_discussion", stallAfter: 4 });
  });

  it("refuses an unknown mode and an invalid config, naming the field", () => {
    expect(() => resolveMode("debate", {}, { agents: AGENTS })).toThrow(
      /no mode "debate" \(modes: free_discussion, sop, voting, expert_routing\)/,
    );
    expect(() => resolveMode("voting", { quorum: 0 }, { agents: AGENTS })).toThrow(/modeConfig\.quorum: /);
    expect(() => resolveMode("voting", { voters: ["ada", "zed"], quorum: 3 }, { agents: AGENTS })).toThrow(
      'modeConfig.voters: no agent "zed"; modeConfig.quorum: 3 ballots can never come from 2 voter(s)',
    );
    expect(() => resolveMode("free_discussion", { surprise: true }, { agents: AGENTS })).toThrow(/modeConfig\.\(root\): Unrecognized key/);
  });

  it("checks an SOP statically: unknown agents, unknown targets, duplicate ids, unreachable steps", () => {
    const steps = [
      { id: "draft", agent: "ada", instruction: "Draft it.", next: "review" },
      { id: "review", agent: "zed", instruction: "Review it.", branches: [{ field: "ok", equals: false, goto: "redo" }], next: null },
      { id: "orphan", agent: "bo", instruction: "Never reached." },
      { id: "draft", agent: "cy", instruction: "Twice." },
    ];
    expect(() => resolveMode("sop", { steps }, { agents: AGENTS })).toThrow(
      [
        'modeConfig.steps[3].id: "draft" is used twice',
        'modeConfig.steps[1].agent: no agent "zed"',
        'modeConfig.steps[1]: goes to "redo", which is no step',
        'modeConfig.steps[2]: "orphan" is unreachable from the first step',
      ].join("; "),
    );
  });
});

describe("free_discussion", () => {
  it("a person's mentions are calls; a reply's mentions are calls from that agent; a reply without one calls nobody", () => {
    const chat = new Chat();
    expect(calls(chat.run({ type: "Post", by: "user:1", text: "@ada @bo what index do we need?" }))).toEqual(["person→ada", "person→bo"]);
    expect(calls(chat.reply("ada", "A btree on email; @cy is that safe?"))).toEqual(["ada→cy"]);
    expect(chat.state.inFlight[chat.callTo("cy")]!.chain).toEqual(["ada", "cy"]);
    expect(calls(chat.reply("bo", "Agreed."))).toEqual([]);
    expect(types(chat.reply("cy", "Yes."))).toEqual(["AgentReplied"]);
    expect(chat.state.inFlight).toEqual({});
  });

  it("a person's mention of an unknown agent is refused with the names and nothing is recorded; an agent's is noted and ignored", () => {
    const chat = new Chat();
    const before = chat.events.length;
    expect(() => chat.run({ type: "Post", by: "user:1", text: "@ada and @zed?" })).toThrow(
      "no agent @zed in this conversation (agents: @ada, @bo, @cy)",
    );
    expect(chat.events.length).toBe(before);
    chat.run({ type: "Post", by: "user:1", text: "@ada?" });
    const out = chat.reply("ada", "ask @zed or @bo");
    expect(notes(out)).toEqual([{ kind: "mention_unknown", names: ["zed"] }]);
    expect(calls(out)).toEqual(["ada→bo"]);
  });
});

describe("the loop guard", () => {
  it("A→B→A: the call back into its own chain is not made; the conversation stalls and calls nobody until a person writes", () => {
    const chat = new Chat();
    chat.run({ type: "Post", by: "user:1", text: "@ada start" });
    chat.reply("ada", "@bo your turn");
    const out = chat.reply("bo", "@ada back to you");
    expect(calls(out)).toEqual([]);
    expect(out.at(-1)).toEqual({
      type: "ConversationStalled",
      data: { reason: "ada → bo → ada: the agents call each other in a circle", turns: 2, cycle: ["ada", "bo", "ada"] },
    });
    expect(chat.state.stalled).toBe(true);
    // A person's message lifts it: its mentions are calls again.
    expect(calls(chat.run({ type: "Post", by: "user:1", text: "@bo go on" }))).toEqual(["person→bo"]);
    expect(chat.state.stalled).toBe(false);
  });

  it("K agent turns without progress stall it; a noted test result or a tally is progress", () => {
    const chat = new Chat(undefined, undefined, 2);
    chat.run({ type: "Post", by: "user:1", text: "@ada go" });
    expect(calls(chat.reply("ada", "@bo"))).toEqual(["ada→bo"]);
    // Turn 2 of 2: bo's mention of cy closes no circle, but the turns without progress ran out.
    const out = chat.reply("bo", "@cy");
    expect(calls(out)).toEqual([]);
    expect(out.at(-1)).toEqual({
      type: "ConversationStalled",
      data: {
        reason: "2 agent turns without progress (a person's message, a decision, an artifact or a test result)",
        turns: 2,
        cycle: null,
      },
    });

    const again = new Chat(undefined, undefined, 3);
    again.run({ type: "Post", by: "user:1", text: "@ada go" });
    again.reply("ada", "@bo");
    again.run({ type: "NoteProgress", kind: "test_result", detail: "node --test passed" });
    expect(again.state.turns).toBe(0);
    expect(calls(again.reply("bo", "@cy"))).toEqual(["bo→cy"]);
  });

  it("a stalled conversation records the replies still in flight, and calls nobody from them", () => {
    const chat = new Chat();
    chat.run({ type: "Post", by: "user:1", text: "@ada @cy both" });
    chat.reply("ada", "@bo");
    chat.reply("bo", "@ada"); // ada → bo → ada: stalled
    const late = chat.reply("cy", "@bo I have more");
    expect(types(late)).toEqual(["AgentReplied"]);
  });
});

describe("termination and bad replies", () => {
  it("after Terminate nothing is posted, no call is made, a late reply is discarded; a reply to no call is discarded", () => {
    const chat = new Chat();
    chat.run({ type: "Post", by: "user:1", text: "@ada @bo" });
    chat.run({ type: "Terminate", reason: "done here", by: "user:1" });
    expect(() => chat.run({ type: "Post", by: "user:1", text: "@ada" })).toThrow("the conversation was terminated");
    expect(chat.reply("ada", "@bo @cy")).toEqual([
      {
        type: "ReplyDiscarded",
        data: { callId: "c1", agent: "ada", errorClass: "late", reason: "the conversation was terminated before the reply came" },
      },
    ]);
    expect(chat.run({ type: "Reply", callId: "c99", text: "hi" })[0]).toMatchObject({
      type: "ReplyDiscarded",
      data: { errorClass: "unknown_call" },
    });
    expect(() => chat.run({ type: "Terminate", reason: "again", by: "user:1" })).toThrow(/terminated/);
  });

  it("an oversized reply is discarded as output_too_large and the call is over", () => {
    const chat = new Chat();
    chat.run({ type: "Post", by: "user:1", text: "@ada" });
    const out = chat.reply("ada", "x".repeat(MAX_REPLY_CHARS + 1));
    expect(out).toEqual([
      {
        type: "ReplyDiscarded",
        data: {
          callId: "c1",
          agent: "ada",
          errorClass: "output_too_large",
          reason: `${MAX_REPLY_CHARS + 1} characters, over the ${MAX_REPLY_CHARS} a reply may have`,
        },
      },
    ]);
    expect(chat.state.inFlight).toEqual({});
  });
});

describe("switching modes", () => {
  it("is refused while calls are in flight; once answered it is an event and a system message, and the new mode decides", () => {
    const chat = new Chat();
    chat.run({ type: "Post", by: "user:1", text: "@ada" });
    expect(() => chat.run({ type: "SwitchMode", mode: "voting", by: "user:1" })).toThrow(
      "1 call(s) are in flight: switch the mode once they are answered",
    );
    chat.reply("ada", "ok");
    const out = chat.run({ type: "SwitchMode", mode: "voting", config: { quorum: 2 }, by: "user:1" });
    expect(out[0]).toEqual({
      type: "ModeSwitched",
      data: { from: "free_discussion", to: "voting", config: { weights: {}, quorum: 2, timeoutMs: 120_000 }, by: "user:1" },
    });
    expect(out[1]).toMatchObject({
      type: "SystemMessage",
      data: { text: expect.stringMatching(/^Mode switched from free_discussion to voting by user:1: Voting:/) },
    });
    expect(() => chat.run({ type: "SwitchMode", mode: "sop", config: { steps: [] }, by: "user:1" })).toThrow(
      /modeConfig\.steps: an SOP needs at least one step/,
    );
    expect(chat.state.mode).toBe("voting");
    expect(calls(chat.run({ type: "Post", by: "user:1", text: "SQLite or Postgres?" }))).toEqual(["person→ada", "person→bo", "person→cy"]);
  });
});

describe("voting", () => {
  const ballot = (choice: string, confidence = 0.8) => JSON.stringify({ choice, rationale: `because ${choice}`, confidence });

  it("every voter gets the question alone; ballots are tallied by weight once all are in; a tally is progress", () => {
    const chat = new Chat("voting");
    const asked = chat.run({ type: "Post", by: "user:1", text: "SQLite or Postgres?" });
    const prompts = asked.flatMap((e) => (e.type === "AgentCallScheduled" ? [e.data.prompt] : []));
    expect(new Set(prompts).size).toBe(1);
    expect(prompts[0]).toContain("you will not see the others' answers");
    chat.reply("ada", ballot("postgres"));
    chat.reply("cy", ballot("postgres"));
    const out = chat.reply("bo", `I think ${ballot("sqlite", 0.9)}`);
    expect(notes(out)).toEqual([
      {
        kind: "tallied",
        round: 1,
        outcome: "winner",
        winner: "postgres",
        totals: [
          { choice: "postgres", weight: 2, ballots: 2, confidence: 1.6, testsPassed: null },
          { choice: "sqlite", weight: 2, ballots: 1, confidence: 0.9, testsPassed: null },
        ],
        absent: [],
        reason: "a tie on weight, broken by more ballots (2)",
      },
    ]);
    expect(chat.state.turns).toBe(0);
    expect(chat.state.modeState.custom).toMatchObject({ open: false, round: 1 });
  });

  it("a ballot that is not valid JSON is rejected with its errors and counts as answered; a late ballot changes nothing", () => {
    const chat = new Chat("voting", { quorum: 2 });
    chat.run({ type: "Post", by: "user:1", text: "Which?" });
    expect(notes(chat.reply("ada", "postgres, obviously"))).toEqual([
      { kind: "ballot_rejected", agent: "ada", errors: [expect.stringMatching(/^not valid JSON: /)] },
    ]);
    expect(notes(chat.reply("bo", '{"choice": "x", "confidence": 2}'))).toEqual([
      {
        kind: "ballot_rejected",
        agent: "bo",
        errors: ["rationale: Invalid input: expected string, received undefined", "confidence: Too big: expected number to be <=1"],
      },
    ]);
    const out = chat.reply("cy", ballot("x"));
    expect(notes(out)).toEqual([
      expect.objectContaining({ kind: "tallied", outcome: "no_quorum", winner: null, reason: "1 valid ballot(s), the quorum is 2" }),
    ]);
  });

  it("a voter that times out does not block the tally: it is listed absent", () => {
    const chat = new Chat("voting", { quorum: 2 });
    chat.run({ type: "Post", by: "user:1", text: "Which?" });
    chat.reply("ada", ballot("a"));
    chat.reply("bo", ballot("b"));
    const out = chat.run({ type: "Timeout", token: "round-1" });
    expect(types(out)).toEqual(["ModeTimedOut", "ModeNoted"]);
    expect(notes(out)[0]).toMatchObject({ outcome: "winner", winner: "b", absent: ["cy"], reason: "the most weight (2)" });
    // The replay folds the same: the round is closed, and cy's late ballot changes nothing.
    expect(notes(chat.reply("cy", ballot("a")))).toEqual([]);
  });

  it("a round sets its deadline; a timer of an earlier round does nothing; a question while a round is open is not a new round", () => {
    const chat = new Chat("voting", { timeoutMs: 5_000 });
    const posted = chat.run({ type: "Post", by: "user:1", text: "Which?" });
    expect(posted.find((e) => e.type === "ModeDeadlineSet")?.data).toEqual({ token: "round-1", afterMs: 5_000 });
    expect(calls(chat.run({ type: "Post", by: "user:1", text: "Also: why?" }))).toEqual([]);
    expect(chat.run({ type: "Timeout", token: "round-0" })).toEqual([]);
    chat.reply("ada", ballot("a"));
    chat.reply("bo", ballot("a"));
    chat.reply("cy", ballot("b"));
    // Every ballot came: the round closed before its timer fired, which then does nothing.
    expect(chat.run({ type: "Timeout", token: "round-1" })).toEqual([]);
    expect(calls(chat.run({ type: "Post", by: "user:1", text: "Next?" }))).toEqual(["person→ada", "person→bo", "person→cy"]);
  });

  it("test results noted for choices outrank votes in the tally, and replay the same; a half-given result is refused", () => {
    const chat = new Chat("voting");
    chat.run({ type: "NoteProgress", kind: "test_result", detail: "patch-b: 12 passed", choice: "patch-b", passed: true });
    chat.run({ type: "NoteProgress", kind: "test_result", detail: "patch-a: 2 failed", choice: "patch-a", passed: false });
    expect(chat.state.evidence).toEqual({ "patch-b": true, "patch-a": false });
    chat.run({ type: "Post", by: "user:1", text: "Which patch?" });
    chat.reply("ada", ballot("patch-a"));
    chat.reply("bo", ballot("patch-a"));
    const out = chat.reply("cy", ballot("patch-b"));
    expect(notes(out)[0]).toMatchObject({ winner: "patch-b", reason: "the choice whose tests passed with the most weight (1)" });
    expect(foldConversation(chat.events).evidence).toEqual(chat.state.evidence);
    expect(() => chat.run({ type: "NoteProgress", kind: "test_result", detail: "x", choice: "patch-c" })).toThrow(
      /needs kind test_result, the choice/,
    );
    expect(() => chat.run({ type: "NoteProgress", kind: "artifact", detail: "x", choice: "c", passed: true })).toThrow(AppError);
  });

  it("a voter whose call failed counts as answered: the tally does not wait for the timeout", () => {
    const chat = new Chat("voting");
    chat.run({ type: "Post", by: "user:1", text: "Which?" });
    chat.reply("ada", ballot("a"));
    chat.reply("bo", ballot("b"));
    const out = chat.run({ type: "CallFailed", callId: chat.callTo("cy"), errorClass: "timeout", message: "no answer" });
    expect(types(out)).toEqual(["AgentCallFailed", "SystemMessage", "ModeNoted", "ModeNoted"]);
    expect(notes(out).map((n) => n.kind)).toEqual(["ballot_rejected", "tallied"]);
    expect(chat.state.inFlight).toEqual({});
    // A failure reported for a call nobody waits for records nothing.
    expect(chat.run({ type: "CallFailed", callId: "c404", errorClass: "timeout", message: "x" })).toEqual([]);
  });

  it("the same ballots give the same winner on every replay, whatever the order they came in; passing tests outrank votes", () => {
    const ballots: Record<string, Ballot> = {
      ada: { choice: "b", rationale: "r", confidence: 0.5 },
      bo: { choice: "a", rationale: "r", confidence: 0.5 },
      cy: { choice: "c", rationale: "r", confidence: 0.5 },
    };
    const weight = () => 1;
    const winners = new Set<string | null>();
    for (const order of [
      ["ada", "bo", "cy"],
      ["cy", "bo", "ada"],
      ["bo", "cy", "ada"],
    ]) {
      const shuffled = Object.fromEntries(order.map((v) => [v, ballots[v]!]));
      winners.add(tally(1, shuffled, weight, 1, order).winner);
    }
    expect([...winners]).toEqual(["a"]); // a full tie: the choice's name decides
    expect(tally(1, ballots, weight, 1, ["ada", "bo", "cy"]).reason).toBe("a full tie, broken by the choice's name");
    const tested = tally(1, ballots, weight, 1, ["ada", "bo", "cy"], { a: false, c: true });
    expect(tested).toMatchObject({ winner: "c", reason: "the choice whose tests passed with the most weight (1)" });
  });

  it("property: every order of the same ballots gives the same winner, tally and reason (sums are exact, ties by code point)", () => {
    // The float case: 0.1 + 0.2 + 0.3 is 0.6000000000000001 in one order and 0.6 in another;
    // a's 0.6 + 0 + 0 ties b's summed confidence exactly, so the name decides: a.
    const tied: Array<[string, Ballot]> = [
      ["v1", { choice: "b", rationale: "r", confidence: 0.1 }],
      ["v2", { choice: "b", rationale: "r", confidence: 0.2 }],
      ["v3", { choice: "b", rationale: "r", confidence: 0.3 }],
      ["v4", { choice: "a", rationale: "r", confidence: 0.6 }],
      ["v5", { choice: "a", rationale: "r", confidence: 0 }],
      ["v6", { choice: "a", rationale: "r", confidence: 0 }],
    ];
    const tallies = new Set(permutations(tied).map((order) => JSON.stringify(tally(1, Object.fromEntries(order), () => 1, 1, []))));
    expect(tallies.size).toBe(1);
    expect(JSON.parse([...tallies][0]!)).toMatchObject({ winner: "a", reason: "a full tie, broken by the choice's name" });

    // Random ballots over 300 seeds: choices, confidences and weights with up to three decimals.
    const weights = [0.1, 0.2, 0.3, 0.7, 1, 1.1, 2.3];
    for (let seed = 1; seed <= 300; seed++) {
      const random = rng(seed);
      const n = 2 + Math.floor(random() * 5);
      const ballots: Array<[string, Ballot]> = Array.from({ length: n }, (_, i) => [
        `voter-${i}`,
        { choice: ["x", "y", "z"][Math.floor(random() * 3)]!, rationale: "r", confidence: Math.floor(random() * 1000) / 1000 },
      ]);
      const weightOf = new Map(ballots.map(([voter]) => [voter, weights[Math.floor(random() * weights.length)]!]));
      const seen = new Set(
        permutations(ballots).map((order) => JSON.stringify(tally(1, Object.fromEntries(order), (v) => weightOf.get(v)!, 1, []))),
      );
      expect(seen.size, `seed ${seed}`).toBe(1);
    }
  });

  it("a full tie goes to the first choice in code-point order, not UTF-16 or locale order", () => {
    // U+FF5A (fullwidth z) comes before U+1F600 (an emoji) by code point; as UTF-16 code units
    // the emoji's surrogate pair (0xD83D...) comes first.
    const ballots: Record<string, Ballot> = {
      ada: { choice: "\u{1F600}", rationale: "r", confidence: 0.5 },
      bo: { choice: "\u{FF5A}", rationale: "r", confidence: 0.5 },
    };
    expect(tally(1, ballots, () => 1, 1, ["ada", "bo"]).winner).toBe("\u{FF5A}");
  });

  it("a replay of the whole conversation reaches the same state and the same tally", () => {
    const chat = new Chat("voting");
    chat.run({ type: "Post", by: "user:1", text: "Which?" });
    for (const a of ["cy", "ada", "bo"]) chat.reply(a, ballot(a === "bo" ? "y" : "x"));
    expect(foldConversation(chat.events)).toEqual(chat.state);
    expect(JSON.stringify(foldConversation([...chat.events]).modeState)).toBe(JSON.stringify(chat.state.modeState));
  });
});

describe("expert_routing", () => {
  it("routes to the agent whose skills the message names, recording candidates, scores and why", () => {
    const chat = new Chat("expert_routing");
    const out = chat.run({ type: "Post", by: "user:1", text: "Is this SQL query safe from injection? security matters" });
    expect(calls(out)).toEqual(["person→ada"]);
    expect(notes(out)).toEqual([
      {
        kind: "routed",
        candidates: [
          { agent: "ada", score: 1, matched: ["sql"] },
          { agent: "cy", score: 1, matched: ["security"] },
          { agent: "bo", score: 0, matched: [] },
        ],
        chosen: ["ada"],
        reason: "best match (score 1): ada: sql",
      },
    ]);
  });

  it("a tie on score goes to the first agent by id in code-point order", () => {
    const agents = [
      { id: "\u{1F600}", name: "Emoji", skills: ["sql"] },
      { id: "\u{FF5A}", name: "Zed", skills: ["sql"] },
      { id: "Zoe", name: "Zoe", skills: ["sql"] },
    ];
    const events: ConversationEvent[] = [];
    let n = 0;
    const ctx = { newId: () => `c${++n}` };
    for (const command of [
      { type: "Start", agents, mode: "expert_routing" },
      { type: "Post", by: "user:1", text: "Which SQL index?" },
    ] as ConversationCommand[])
      events.push(...decideConversation(foldConversation(events), command, ctx));
    // "Zoe" < U+FF5A < U+1F600 by code point; localeCompare would put the letters before or after the emoji by locale.
    expect(notes(events).find((note) => note.kind === "routed")).toMatchObject({
      candidates: [{ agent: "Zoe" }, { agent: "\u{FF5A}" }, { agent: "\u{1F600}" }],
      chosen: ["Zoe"],
    });
  });

  it("no match asks a person and calls nobody", () => {
    const chat = new Chat("expert_routing");
    const out = chat.run({ type: "Post", by: "user:1", text: "What should we name the cat?" });
    expect(calls(out)).toEqual([]);
    expect(notes(out).map((n) => n.kind)).toEqual(["routed", "needs_person"]);
    expect(notes(out)[1]).toEqual({
      kind: "needs_person",
      reason: "no agent's skills match the message (best score 0, at least 1 needed)",
    });
  });
});

describe("sop", () => {
  const config = {
    steps: [
      { id: "draft", agent: "ada", instruction: "Draft the schema." },
      {
        id: "review",
        agent: "cy",
        instruction: "Review it.",
        branches: [{ field: "approved", equals: false, goto: "draft" }],
        next: "style",
        maxVisits: 2,
      },
      { id: "style", agent: "bo", instruction: "Check the naming.", next: null },
    ],
  };

  it("runs the steps in order, branches on a reply's field, loops back, and completes (a decision: progress)", () => {
    const chat = new Chat("sop", config);
    expect(calls(chat.run({ type: "Post", by: "user:1", text: "A users table" }))).toEqual(["person→ada"]);
    expect(calls(chat.reply("ada", "CREATE TABLE users (...)"))).toEqual(["person→cy"]);
    const back = chat.reply("cy", 'Missing an index. {"approved": false}');
    expect(calls(back)).toEqual(["person→ada"]);
    expect(notes(back)).toEqual([{ kind: "step", step: "draft", agent: "ada", visit: 2, attempt: 1 }]);
    chat.reply("ada", "CREATE TABLE users (...); CREATE INDEX ...");
    expect(calls(chat.reply("cy", '{"approved": true}'))).toEqual(["person→bo"]);
    const done = chat.reply("bo", "Names are fine.");
    expect(notes(done)).toEqual([{ kind: "sop_completed", steps: ["draft", "review", "draft", "review", "style"] }]);
    expect(chat.state.modeState.currentStep).toBeNull();
    expect(chat.state.turns).toBe(0);
  });

  it("each step's call opens with the task, the same for every step and sent before the thread, then the step's instruction", () => {
    const chat = new Chat("sop", config);
    const asked = (events: ConversationEvent[]) =>
      events.flatMap((e) => (e.type === "AgentCallScheduled" ? [{ prompt: e.data.prompt, stable: e.data.promptStableChars }] : []));
    const task = "The task: A users table\n";
    const [draft] = asked(chat.run({ type: "Post", by: "user:1", text: "A users table" }));
    const [review] = asked(chat.reply("ada", "CREATE TABLE users (...)"));
    expect(draft).toEqual({ prompt: `${task}\nDraft the schema.`, stable: task.length });
    // What followed the task (the draft's answer) comes after the instruction: the task before the thread stays the same.
    expect(review).toEqual({
      prompt: `${task}\nReview it.\n\nSince then:\ndraft (ada) answered:\nCREATE TABLE users (...)\n\nEnd your reply with a JSON object holding "approved".`,
      stable: task.length,
    });
    // A call made again in a fork keeps it.
    const again = asked(chat.run({ type: "Reissue" }));
    expect(again).toEqual([review]);
  });

  it("a loop past a step's cap stops for a person", () => {
    const chat = new Chat("sop", config);
    chat.run({ type: "Post", by: "user:1", text: "A users table" });
    chat.reply("ada", "v1");
    chat.reply("cy", '{"approved": false}');
    chat.reply("ada", "v2");
    chat.reply("cy", '{"approved": false}');
    const out = chat.reply("ada", "v3");
    expect(calls(out)).toEqual([]);
    expect(notes(out)).toEqual([{ kind: "needs_person", reason: "step review would run for the 3rd time (its loop cap is 2)" }]);
  });

  it("a reply without the field a branch reads is retried once, then a person is asked", () => {
    const chat = new Chat("sop", config);
    chat.run({ type: "Post", by: "user:1", text: "A users table" });
    chat.reply("ada", "v1");
    const retried = chat.reply("cy", "looks fine to me");
    expect(notes(retried)).toEqual([{ kind: "step", step: "review", agent: "cy", visit: 1, attempt: 2 }]);
    expect(calls(retried)).toEqual(["person→cy"]);
    const stopped = chat.reply("cy", "still no JSON");
    expect(notes(stopped)).toEqual([{ kind: "needs_person", reason: 'step review: the reply has no "approved" after 2 attempt(s)' }]);
  });
});

/** mulberry32: a small seeded PRNG, so each seed is one reproducible conversation. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("property: agents that always mention each other", () => {
  it("over 10,000 seeds, every conversation stalls within K+1 agent turns and makes no call after that", () => {
    const names = ["a1", "a2", "a3", "a4", "a5", "a6"];
    for (let seed = 1; seed <= 10_000; seed++) {
      const random = rng(seed);
      const agents = names.slice(0, 2 + Math.floor(random() * 5)).map((id) => ({ id, name: id, skills: [] }));
      const K = 1 + Math.floor(random() * 6);
      let n = 0;
      const ctx = { newId: () => `c${++n}` };
      const events: ConversationEvent[] = [];
      const run = (c: ConversationCommand) => {
        const out = decideConversation(foldConversation(events), c, ctx);
        events.push(...out);
        return out;
      };
      run({ type: "Start", agents, stallAfter: K });
      const pick = () => agents[Math.floor(random() * agents.length)]!.id;
      run({ type: "Post", by: "user:1", text: `@${pick()} start` });
      let turns = 0;
      let stalledAt: number | null = null;
      let callsAfterStall = 0;
      for (let step = 0; step < 60; step++) {
        const state = foldConversation(events);
        const inFlight = Object.keys(state.inFlight);
        if (!inFlight.length) break;
        const callId = inFlight[Math.floor(random() * inFlight.length)]!;
        const me = state.inFlight[callId]!.agent;
        // Every reply mentions one to three other agents, chosen at random.
        const others = agents.filter((a) => a.id !== me);
        const mentioned = others.filter(() => random() < 0.6);
        const text = (mentioned.length ? mentioned : [others[0]!]).map((a) => `@${a.id}`).join(" ");
        const out = run({ type: "Reply", callId, text });
        turns++;
        if (stalledAt !== null) callsAfterStall += out.filter((e) => e.type === "AgentCallScheduled").length;
        if (stalledAt === null && out.some((e) => e.type === "ConversationStalled")) stalledAt = turns;
      }
      if (stalledAt === null || stalledAt > K + 1 || callsAfterStall !== 0) {
        throw new Error(`seed ${seed}: K=${K}, ${agents.length} agents, stalled at turn ${stalledAt}, ${callsAfterStall} call(s) after`);
      }
    }
  });
});

/** Every order of `items` (n! of them). */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}
