// Example: start a task, follow its roundtable live, confirm the proposal, and follow the
// build, review and tests to the end. Exit code 0 when the session is approved.
//
//   CATCAFE_URL=http://localhost:3000 CATCAFE_TOKEN=cc_... \
//     node --import tsx docs/examples/start-and-watch.ts [project] ["prompt"]
//
// (Tokens: `catcafe login`, `catcafe token create`, or the web app.) The test suite runs
// this against a live server: test/e2e/examples.e2e.test.ts.
import { createCatCafeClient, describeError, followSession } from "../../lib/client";

const url = process.env.CATCAFE_URL ?? "http://localhost:3000";
const token = process.env.CATCAFE_TOKEN;
if (!token) throw new Error("set CATCAFE_TOKEN to an API token");
const [projectId = "demo", prompt = "Fix slugify() in src/slugify.js so that `node --test test/` passes."] = process.argv.slice(2);

const cats = createCatCafeClient({ url, token });

async function main(): Promise<number> {
  const { sessionId } = await cats.tasks.start.mutate({ projectId, prompt, mode: "proposal" });
  console.log(`started ${sessionId}`);
  // Live over Server-Sent Events until the session ends.
  for await (const update of followSession(cats, sessionId)) {
    if (update.type === "event") {
      console.log(`#${update.entry.version} ${update.entry.type}: ${update.entry.summary.split("\n")[0]}`);
    } else if (update.type === "waiting") {
      // The roundtable is over and only a person's confirm goes on: this script is that person.
      console.log(`waiting in ${update.status.state}: confirming`);
      await cats.tasks.confirm.mutate({ sessionId, via: "api" });
    } else {
      console.log(`finished: ${update.status.outcome}`);
      return update.success ? 0 : 3;
    }
  }
  return 1; // the updates ended without an end: cannot happen unless aborted
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    const { code, message } = describeError(err);
    console.error(`failed: ${code}: ${message}`);
    process.exitCode = 1;
  },
);
