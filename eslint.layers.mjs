// The layers of the code, enforced by eslint-plugin-boundaries: each element may import only
// the elements listed for it; a violating import fails `npm run lint`. The same layers are
// drawn in docs/architecture.md ("Where the code is"). Lower layers never import higher
// ones; a layer not listed is refused.
import boundaries from "eslint-plugin-boundaries";

/** What every part may use: errors, environment, logging, the database pool, ports, and lib/
 *  (small helpers shared with the browser, which import nothing of the server's), and the metrics' record functions. */
const base = ["base", "db", "lib", "metrics"];

/** element → what it may import (besides itself). Order: lowest first. */
const layers = {
  base: { pattern: "server/{errors,env,log,version,agent-calls,deadline,redact}.ts", allow: ["lib"] },
  db: { pattern: "server/{db,net,tracing}", allow: ["base", "lib"] },
  /** The process's Prometheus registry and families; recorded by every layer, read at scrape (docs/operations.md, "Metrics"). */
  metrics: { pattern: "server/metrics", allow: ["base", "lib"] },
  process: { pattern: "server/process", allow: base },
  events: { pattern: "server/events", allow: base },
  commands: { pattern: "server/commands", allow: [...base, "process"] },
  workspaces: { pattern: "server/workspaces", allow: [...base, "process"] },
  brains: { pattern: "server/brains", allow: base },
  agents: { pattern: "server/agents", allow: [...base, "process", "brains"] },
  /** Users, roles, tokens and invitations; each change to the team is an event (docs/auth.md, "Audit"). */
  auth: { pattern: "server/auth", allow: [...base, "events"] },

  /** Collaboration modes and the conversation decider: pure, like the workflow engine. */
  modes: { pattern: "server/modes", allow: base },
  /** The generic workflow engine: definitions, the decider and its fold, the extension point, the reactor. */
  workflow: { pattern: "server/workflow", allow: [...base, "events", "agents"] },
  /**
   * The Forge pipeline, the engine's extension: its definition (data), artifact schemas, stage
   * rules, the anti-loop, its slice of a task and the fold of it, its outputs and step inputs.
   */
  forge: { pattern: "server/forge", allow: [...base, "events", "workflow"] },
  /** The application's task engine: the generic workflow engine with the built-in workflows. */
  "task-engine": { pattern: "server/task-engine.ts", allow: [...base, "events", "workflow", "forge"] },
  config: {
    pattern: "server/config",
    allow: [...base, "process", "events", "agents", "commands", "workspaces", "workflow", "task-engine"],
  },
  sessions: { pattern: "server/sessions", allow: [...base, "events", "workflow", "task-engine", "auth"] },
  projects: { pattern: "server/projects", allow: [...base, "events", "agents", "commands", "config", "workflow", "task-engine"] },
  tasks: {
    pattern: "server/tasks",
    allow: [...base, "events", "agents", "workflow", "task-engine", "config", "projects", "workspaces", "forge", "usage"],
  },
  export: { pattern: "server/export", allow: [...base, "events", "config", "task-engine", "sessions", "usage", "agent-record"] },
  /** Usage and cost (docs/delivery.md): the agent_usage projection and its totals, priced with the settings' table. */
  usage: { pattern: "server/usage", allow: [...base, "events", "config"] },
  /** Per-session figures, the bake-off comparison and the project's agent record (docs/bake-off.md): read models over the events. */
  "agent-record": {
    pattern: "server/agent-record",
    allow: [...base, "events", "task-engine", "forge", "config", "workspaces", "usage", "projects", "sessions"],
  },
  runner: {
    pattern: "server/runner",
    allow: [...base, "process", "events", "agents", "brains", "commands", "workspaces", "workflow", "forge", "config"],
  },
  /** Conversations (req C1–C8): modes on the event store, their calls run as steps by the runners; `/task` starts a task (req W13). */
  conversations: {
    pattern: "server/conversations",
    allow: [...base, "process", "events", "agents", "brains", "modes", "config", "projects", "workspaces", "runner", "tasks"],
  },
  /**
   * Back to the issue tracker (docs/delivery.md, "The tracker"): the GitHub and GitLab client, the
   * issue comment and commit status steps, review comments as follow-ups.
   */
  tracker: {
    pattern: "server/tracker",
    allow: [...base, "events", "runner", "task-engine", "config", "projects", "tasks"],
  },
  /** Delivering an approved session's work (docs/delivery.md): its branch pushed, a pull request, a local merge. */
  delivery: {
    pattern: "server/delivery",
    allow: [...base, "process", "events", "workspaces", "runner", "task-engine", "config", "projects", "tracker"],
  },
  /** Cleaning up failed sessions' workspaces (req F14, docs/operations.md): asked as events, run as a step by a runner. */
  pruning: {
    pattern: "server/pruning",
    allow: [...base, "process", "events", "workspaces", "runner", "task-engine", "config", "projects"],
  },
  /** Intake from an issue tracker (docs/intake.md): webhook deliveries verified, rules, tasks started or held in the inbox. */
  intake: {
    pattern: "server/intake",
    allow: [...base, "events", "task-engine", "config", "projects", "tasks", "delivery", "tracker"],
  },
  /** Bake-offs (docs/bake-off.md): the judge's step, the pick that delivers the winner, the comparison's source and export. */
  "bake-off": {
    pattern: "server/bake-off",
    allow: [
      ...base,
      "process",
      "events",
      "agents",
      "brains",
      "workspaces",
      "workflow",
      "task-engine",
      "config",
      "runner",
      "tasks",
      "delivery",
      "usage",
    ],
  },
  store: { pattern: "server/app-store.ts", allow: [...base, "events", "sessions", "runner", "usage"] },
  /** The list of every step kind the runners run, each with its executor and reaction (docs/architecture.md, "Step kinds"). */
  "app-runner": {
    pattern: "server/app-runner.ts",
    allow: [...base, "events", "runner", "task-engine", "conversations", "delivery", "pruning", "intake", "tracker", "bake-off"],
  },
  /** The runner process's entry point: composes the store and the registry of the step kinds. */
  "runner-main": { pattern: "server/runner/main.ts", allow: [...base, "agents", "projects", "runner", "store", "app-runner", "pruning"] },
  health: { pattern: "server/health.ts", allow: [...base, "runner"] },
  /** Backup and restore of the whole database (docs/operations.md): COPY out and in, then the projections rebuilt. */
  backup: { pattern: "server/backup", allow: [...base, "events", "store"] },
  demo: {
    pattern: "server/demo",
    allow: [...base, "process", "events", "agents", "projects", "tasks", "workspaces", "store", "forge", "conversations"],
  },
  api: {
    pattern: "server/api",
    allow: [
      ...base,
      ...["events", "agents", "brains", "auth", "workflow", "task-engine", "config", "sessions", "projects", "tasks", "export", "runner"],
      ...[
        "workspaces",
        "store",
        "health",
        "modes",
        "conversations",
        "delivery",
        "pruning",
        "usage",
        "intake",
        "tracker",
        "agent-record",
        "bake-off",
      ],
    ],
  },
};

// More specific patterns first: the first element whose pattern matches a file is its element.
const order = ["runner-main", ...Object.keys(layers).filter((t) => t !== "runner-main")];
// A pattern naming .ts files is a file element (mode "file"); the others are folders.
export const layerElements = order.map((type) => {
  const { pattern } = layers[type];
  return pattern.endsWith(".ts") ? { type, pattern, mode: "file" } : { type, pattern };
});

const serverTypes = Object.keys(layers);

/** The browser side: components and shared helpers see the server only through its types. */
const clientLayers = {
  lib: { pattern: "lib", allow: [] },
  components: { pattern: "components", allow: ["lib"] },
};
const clientElements = Object.entries(clientLayers).map(([type, l]) => ({ type, pattern: l.pattern }));

export default [
  {
    files: ["server/**/*.ts", "components/**/*.{ts,tsx}", "lib/**/*.{ts,tsx}"],
    ignores: ["server/db/generated/**"],
    plugins: { boundaries },
    settings: {
      "boundaries/elements": [...layerElements, ...clientElements],
      "boundaries/include": ["server/**/*.ts", "components/**/*.{ts,tsx}", "lib/**/*.{ts,tsx}"],
      // File elements still need `mode: "file"` in this version; its deprecation notice is noise.
      "boundaries/legacy-warnings": false,
      "import/resolver": { typescript: { alwaysTryTypes: true }, node: true },
    },
    rules: {
      "boundaries/dependencies": [
        "error",
        {
          default: "disallow",
          message: "{{from.type}} may not import {{to.type}}: see the layers in docs/architecture.md (eslint.layers.mjs)",
          policies: [
            ...Object.entries({ ...layers, ...clientLayers }).map(([type, l]) => ({
              from: { element: { type } },
              allow: { to: { element: { types: { anyOf: [type, ...l.allow] } } } },
            })),
            // Types cross to the browser side (AppRouter, row shapes); server code never does.
            ...Object.keys(clientLayers).map((type) => ({
              from: { element: { type } },
              allow: { to: { element: { types: { anyOf: serverTypes } } }, dependency: { kind: "type" } },
            })),
          ],
        },
      ],
    },
  },
];
