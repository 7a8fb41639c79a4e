// Example: list the approved sessions, newest first, and export the newest one (or the one
// named) in the export layout (req E8): summary.json, task-events.jsonl, task-timeline.json
// and rounds/<nn>/.
//
//   CATCAFE_URL=http://localhost:3000 CATCAFE_TOKEN=cc_... \
//     node --import tsx docs/examples/list-and-export.ts <out-dir> [session-id]
//
// The test suite runs this against a live server: test/e2e/examples.e2e.test.ts.
import fs from "node:fs";
import path from "node:path";
import { createCatCafeClient, describeError, downloadExport, writeExportFiles } from "../../lib/client";

const url = process.env.CATCAFE_URL ?? "http://localhost:3000";
const token = process.env.CATCAFE_TOKEN;
if (!token) throw new Error("set CATCAFE_TOKEN to an API token");
const [outDir, wanted] = process.argv.slice(2);
if (!outDir) throw new Error("usage: list-and-export.ts <out-dir> [session-id]");

async function main(outDir: string): Promise<void> {
  const cats = createCatCafeClient({ url, token });
  const { items } = await cats.sessions.list.query({ state: "approved", limit: 10 });
  for (const s of items) console.log(`${s.id}  ${s.state}  ${s.version} events  ${s.title}`);
  const sessionId = wanted ?? items[0]?.id;
  if (!sessionId) throw new Error("no approved session to export");

  const files = await downloadExport({ url, token }, sessionId);
  await writeExportFiles(files, outDir);
  const summary = JSON.parse(fs.readFileSync(path.join(outDir, "summary.json"), "utf8")) as { outcome?: unknown };
  console.log(`exported ${sessionId} (${String(summary.outcome)}): ${files.size} files in ${path.resolve(outDir)}`);
}

main(outDir).catch((err: unknown) => {
  const { code, message } = describeError(err);
  console.error(`failed: ${code}: ${message}`);
  process.exitCode = 1;
});
