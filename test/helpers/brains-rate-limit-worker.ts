// A stand-in runner process for the shared rate-limit test: makes CALLS calls to one
// OpenAI-compatible brain through the database gate, as a runner's agent executor does,
// and prints one JSON line per wait and a final summary.
//   DATABASE_URL, STUB_URL, WORKER, CALLS, INTERVAL_MS, BRAIN_API_KEY (the key variable)
import { BrainAgent } from "../../server/agents/brain";
import { databaseCallGate } from "../../server/brains/rate-limit";
import { createPool } from "../../server/db/pool";
import { STUB_PRIVATE_HOSTS } from "./brains-stub";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const pool = createPool(env("DATABASE_URL"), 2, { applicationName: `brains-worker-${env("WORKER")}` });
const agent = new BrainAgent({
  kind: "openai",
  id: "shared-brain",
  baseUrl: env("STUB_URL"),
  model: "stub-model",
  apiKeyEnv: "BRAIN_API_KEY",
  rateLimit: { minIntervalMs: Number(env("INTERVAL_MS")) },
});
let waits = 0;
const gate = databaseCallGate(pool, {
  onWait: ({ waitedMs }) => {
    waits++;
    console.log(JSON.stringify({ wait: waitedMs }));
  },
});

try {
  for (let i = 0; i < Number(env("CALLS")); i++) {
    const response = await agent.invoke({
      role: "coder",
      prompt: `worker ${env("WORKER")} call ${i}`,
      context: [],
      workspace: process.cwd(),
      invocation: i,
      signal: new AbortController().signal,
      deadline: Date.now() + 30_000,
      callGate: gate,
      // The stub's host, allowed as the admin would (access.privateHosts).
      privateHosts: STUB_PRIVATE_HOSTS,
    });
    if (response.text !== "ok") throw new Error(`unexpected answer ${response.text}`);
  }
  console.log(JSON.stringify({ done: true, waits }));
} finally {
  await pool.end();
}
