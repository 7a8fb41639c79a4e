// LangGraph's side of the langgraph comparison (LangGraph.js with its PostgreSQL checkpointer):
// a three-node no-op graph (a → b → c, each node returns at once with one small value, as a
// Cat Cafe no-op step returns its output), checkpointed after every super-step in a database
// of its own on the bench's PostgreSQL; and a long thread built by a one-node graph that
// loops on itself, one checkpoint per super-step.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";

/** What the graph carries: which node ran last and how many ran (a step's small output). */
const NoopState = Annotation.Root({
  node: Annotation<string>,
  steps: Annotation<number>,
});

type NoopValues = typeof NoopState.State;

const noop = (node: string) => (state: NoopValues) => ({ node, steps: (state.steps ?? 0) + 1 });

export interface LangGraphPeer {
  pool: pg.Pool;
  saver: PostgresSaver;
  /** The three-node no-op graph. */
  threeNodes: ReturnType<typeof threeNodeGraph>;
  /** One node that loops until `steps` reaches the input's `target`: a long thread in one run. */
  loop: ReturnType<typeof loopGraph>;
  close(): Promise<void>;
}

function threeNodeGraph(saver: PostgresSaver) {
  return new StateGraph(NoopState)
    .addNode("a", noop("a"))
    .addNode("b", noop("b"))
    .addNode("c", noop("c"))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile({ checkpointer: saver });
}

const LoopState = Annotation.Root({
  node: Annotation<string>,
  steps: Annotation<number>,
  target: Annotation<number>,
});

function loopGraph(saver: PostgresSaver) {
  return new StateGraph(LoopState)
    .addNode("step", (s: typeof LoopState.State) => ({ node: "step", steps: (s.steps ?? 0) + 1 }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (s: typeof LoopState.State) => (s.steps >= s.target ? END : "step"))
    .compile({ checkpointer: saver });
}

/** Creates `database` on the server of `url` (dropped first if a failed run left it) and returns its URL. */
export async function createPeerDatabase(url: string, database: string): Promise<string> {
  const admin = new pg.Client({ connectionString: url, application_name: "bench-control" });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(database)}`);
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** The checkpointer's tables created (PostgresSaver.setup), a pool sized as a Cat Cafe worker's (`concurrency` + 4). */
export async function openLangGraphPeer(url: string, concurrency: number): Promise<LangGraphPeer> {
  const pool = new pg.Pool({ connectionString: url, max: concurrency + 4, application_name: "bench-langgraph" });
  // A connection still closing when the bench stops its PostgreSQL reports the shutdown as an
  // 'error' event on its client; unheard, it would end the bench before the report is written.
  pool.on("connect", (client) => client.on("error", () => {}));
  pool.on("error", () => {});
  const saver = new PostgresSaver(pool);
  await saver.setup();
  return {
    pool,
    saver,
    threeNodes: threeNodeGraph(saver),
    loop: loopGraph(saver),
    close: () => pool.end(),
  };
}

export const threadConfig = (threadId: string) => ({ configurable: { thread_id: threadId } });
