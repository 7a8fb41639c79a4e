// The issue a session was started from (server/tracker/session-issue.ts), read at every step's
// outcome: found in the session's stream or an ancestor's up to the fork point, and read through
// the index of TaskStartedFromIssue events alone, so that its cost never grows with the log.
import { beforeAll, describe, expect, it } from "vitest";
import { ISSUE_SQL, sessionIssue } from "../../server/tracker/session-issue";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

const issue = (issueNumber: number) => ({
  provider: "github" as const,
  repository: "acme/app",
  issueNumber,
  issueUrl: `https://github.com/acme/app/issues/${issueNumber}`,
  title: `issue ${issueNumber}`,
  trigger: "label" as const,
  deliveryId: uniqueId(),
  sender: "octocat",
});

async function session(events: Array<{ type: string; data: unknown }> = []): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "s", workflow: "test", state: "open" } }, ...events], {
    actor: testActor,
  });
  return id;
}

async function fork(parentId: string, atVersion: number): Promise<string> {
  const childId = uniqueId();
  await db.store.fork({
    parentId,
    atVersion,
    childId,
    event: { type: "SessionForked", data: { parentId, atVersion, reason: "rerun", title: "c", workflow: "test", state: "open" } },
    metadata: { actor: testActor },
  });
  return childId;
}

describe("sessionIssue", () => {
  it("finds the issue in the session's stream, and in an ancestor's up to the fork point only", async () => {
    const parent = await session([{ type: "TaskStartedFromIssue", data: issue(7) }]);
    expect(await sessionIssue(db.pool, parent)).toMatchObject({ provider: "github", issueNumber: 7 });
    expect(await sessionIssue(db.pool, await fork(parent, 2))).toMatchObject({ issueNumber: 7 });
    // Forked before the issue was recorded: not this session's issue.
    expect(await sessionIssue(db.pool, await fork(parent, 1))).toBeNull();
    // Its own, recorded later, comes before the inherited one.
    const child = await fork(parent, 2);
    await db.store.append(child, 3, [{ type: "TaskStartedFromIssue", data: issue(8) }], { actor: testActor });
    expect(await sessionIssue(db.pool, child)).toMatchObject({ issueNumber: 8 });
    expect(await sessionIssue(db.pool, await session())).toBeNull();
  });

  it("reads through the issue events' own index, not the log by position, however long the log is", async () => {
    // A log of other sessions' events around a session that has no issue.
    const crowd = await session();
    for (let i = 0; i < 20; i++) {
      await db.store.append(
        crowd,
        1 + i * 100,
        Array.from({ length: 100 }, () => ({ type: "OperatorMessagePosted", data: { text: "x" } })),
        { actor: testActor },
      );
    }
    const plain = await fork(await session([{ type: "OperatorMessagePosted", data: { text: "y" } }]), 2);
    await db.pool.query("ANALYZE events");
    const { rows } = await db.pool.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${ISSUE_SQL}`, [plain]);
    const plan = JSON.stringify(rows[0]!["QUERY PLAN"]);
    expect(plan).toContain("events_task_started_from_issue_idx");
    expect(plan).not.toContain("events_pkey");
    expect(await sessionIssue(db.pool, plain)).toBeNull();
  });
});
