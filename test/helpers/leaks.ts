// Where a value appears that must appear nowhere (req N4, docs/security.md): every table's
// rows as text (events, projections, live-stream chunks, keys), every blob, a session's
// export as a member and as a viewer, and the runner's log lines.
import { exportSession } from "../../server/export";
import type { TestDatabase } from "./db";

export async function leaksOf(db: TestDatabase, sessionId: string, secrets: readonly string[], logs: readonly string[]): Promise<string[]> {
  const leaks: string[] = [];
  const tables = await db.pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
  );
  for (const { table_name } of tables.rows) {
    const dump = await db.pool.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
    for (const { row } of dump.rows) for (const s of secrets) if (row.includes(s)) leaks.push(`${table_name}: ${s}`);
  }
  const blobs = await db.pool.query<{ content: Buffer }>("SELECT content FROM blobs");
  if (!blobs.rowCount) leaks.push("no blob at all: nothing was recorded to look in");
  for (const { content } of blobs.rows) for (const s of secrets) if (content.toString("utf8").includes(s)) leaks.push(`blob: ${s}`);
  for (const audience of ["member", "viewer"] as const) {
    for (const [file, content] of await exportSession(db.store, db.pool, sessionId, { audience })) {
      for (const s of secrets) if (String(content).includes(s)) leaks.push(`export (${audience}) ${file}: ${s}`);
    }
  }
  for (const line of logs) for (const s of secrets) if (line.includes(s)) leaks.push(`log: ${s}`);
  return leaks;
}
