// The demo's conversations (req C1–C8): what the simulated agents say when they are called in
// a conversation (by the call's output: `reply` for free discussion and routing, `ballot` for
// a vote, `sop` for a procedure's steps), the skills expert routing matches, and one seeded
// conversation per mode, so `npm start` shows every mode working without keys.
import type { ScriptedAgentConfigInput } from "../agents/config";

const TYPING_MS = 60;
const say = (reply: string) => ({ reply, chunkDelayMs: TYPING_MS });
const ballot = (choice: string, rationale: string, confidence: number) => say(JSON.stringify({ choice, rationale, confidence }));

type Role = "coder" | "reviewer" | "tester" | "planner";

/** Per role: the conversation replies (byOutput entries) and skill tags. */
export const DEMO_CONVERSATION_SCRIPTS: Record<Role, { byOutput: NonNullable<ScriptedAgentConfigInput["byOutput"]>; skills: string[] }> = {
  coder: {
    skills: ["javascript", "implementation", "refactoring", "slugify"],
    byOutput: {
      // Called, it asks the reviewer; the reviewer asks the tester; the tester hands back to the
      // coder: a circle (coder → reviewer → tester → coder) the loop guard stops.
      reply: [
        say(
          "Coder (simulated): I'd keep slugify() to one pass: lower-case, strip accents, collapse every run of other characters into one '-', trim the ends. @reviewer-sim, anything I'm missing?",
        ),
        say("Coder (simulated): Agreed on both; I'll write them as tests first."),
      ],
      ballot: [ballot("node:test", "Already in the project, no dependency, fast enough for a few hundred tests.", 0.8)],
      sop: [
        say("Coder (simulated): Implemented the plan in src/slugify.js: NFKD, drop the marks, one regex for separators."),
        say("Coder (simulated): Fixed: leading and trailing dashes are trimmed now, with a test for '--Hello--'."),
      ],
    },
  },
  reviewer: {
    skills: ["review", "security", "code quality"],
    byOutput: {
      reply: [
        say(
          "Reviewer (simulated): Looks right. Watch accented letters: 'Crème brûlée' should become 'creme-brulee', not 'cr-me-br-l-e'. @tester-sim, can you cover that?",
        ),
      ],
      ballot: [ballot("vitest", "Watch mode and snapshots help while the slug rules settle.", 0.6)],
      sop: [
        say('Reviewer (simulated): One gap: a title that starts with punctuation keeps a leading dash. {"decision": "changes"}'),
        say('Reviewer (simulated): All good now. {"decision": "approve"}'),
      ],
    },
  },
  tester: {
    skills: ["tests", "testing", "edge cases", "qa"],
    byOutput: {
      reply: [
        say(
          "Tester (simulated): Added 'Crème brûlée' → 'creme-brulee', '  spaces  ' → 'spaces' and '' → '' to my list. @coder-sim, over to you.",
        ),
      ],
      ballot: [ballot("node:test", "The demo's tests already run on it; switching buys little.", 0.7)],
      sop: [say("Tester (simulated): 9 cases pass.")],
    },
  },
  planner: {
    skills: ["planning", "design", "requirements", "roadmap"],
    byOutput: {
      reply: [say("Planner (simulated): First agree on the rules for accents and separators, then write the tests, then the code.")],
      ballot: [ballot("vitest", "A richer runner pays off once the project grows.", 0.5)],
      sop: [say("Planner (simulated): Plan: 1) normalise accents, 2) collapse separators, 3) trim dashes, 4) tests for each rule.")],
    },
  },
};

/** One conversation per mode, started on the demo project the first time the demo is seeded. */
export const DEMO_CONVERSATIONS = [
  {
    title: "Demo chat: free discussion (agents @mention each other)",
    mode: "free_discussion",
    message: "@coder-sim how should slugify() handle accented titles?",
  },
  {
    title: "Demo chat: expert routing (by skill tags)",
    mode: "expert_routing",
    message: "Which edge cases need tests before we change slugify()?",
  },
  {
    title: "Demo chat: voting (weighted ballots, a quorum)",
    mode: "voting",
    modeConfig: { quorum: 3, weights: { "coder-sim": 2 } },
    message: "Which test runner should the demo project use: node:test or vitest?",
  },
  {
    title: "Demo chat: SOP (plan → implement → review, looping on changes)",
    mode: "sop",
    modeConfig: {
      steps: [
        { id: "plan", agent: "planner-sim", instruction: "Plan the change in a few numbered steps." },
        { id: "implement", agent: "coder-sim", instruction: "Implement the plan." },
        {
          id: "review",
          agent: "reviewer-sim",
          instruction: "Review the implementation.",
          branches: [{ field: "decision", equals: "changes", goto: "implement" }],
          next: null,
        },
      ],
    },
    message: "Make slugify() handle accents and stray punctuation.",
  },
] as const;
