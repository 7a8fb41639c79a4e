// What the project's intake page and `catcafe intake show` read: the rules as saved, whether a
// webhook secret is set (when, by whom — never the value), the configuration stream's version
// (a save from an older form is refused) and the receivers' paths.
import { z } from "zod";
import { ZIntakeSettings, type IntakeSettings } from "../config/schemas";
import type { Db } from "../db/pool";
import type { EventStore } from "../events/store";
import { projectConfigStream } from "../projects/config-edits";
import { getProject } from "../projects/projects";
import { webhookSecretStatus } from "./secret";

export const ZIntakeProjectRef = z.object({ projectId: z.string().min(1).max(100) });

/** The form's input: the rules whole (null removes them), judged by ZIntakeSettings, so a refusal names `rules.<field>`. */
export const ZSetIntakeRulesInput = ZIntakeProjectRef.extend({
  rules: z
    .record(z.string(), z.unknown())
    .nullable()
    .superRefine((rules, ctx) => {
      if (rules === null) return;
      const judged = ZIntakeSettings.safeParse(rules);
      if (!judged.success)
        for (const issue of judged.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
    }),
  expectedVersion: z.number().int().nonnegative().optional(),
});

export interface IntakeOverview {
  projectId: string;
  rules: IntakeSettings | null;
  secret: { setAt: string; setBy: string } | null;
  version: number;
  receivers: { github: string; gitlab: string };
}

export async function intakeOverview(
  deps: { pool: Db; store: EventStore },
  projectId: string,
  publicUrl = process.env.NEXTAUTH_URL,
): Promise<IntakeOverview> {
  const project = await getProject(deps.pool, projectId);
  const parsed = ZIntakeSettings.safeParse(project.settings.intake);
  const base = (publicUrl ?? "").replace(/\/+$/, "");
  return {
    projectId,
    rules: parsed.success ? parsed.data : null,
    secret: await webhookSecretStatus(deps.pool, projectId),
    version: (await deps.store.streamVersion(projectConfigStream(projectId))) ?? 0,
    receivers: { github: `${base}/api/hooks/github`, gitlab: `${base}/api/hooks/gitlab` },
  };
}

export const ZSessionIssueRef = z.object({ sessionId: z.string().min(1).max(100) });

export interface SessionIssue {
  provider: "github" | "gitlab";
  repository: string;
  issueNumber: number;
  issueUrl: string;
  trigger: string;
}

/** The issue a session was started from (its TaskStartedFromIssue), or null. */
export async function issueOfSession(db: Db, sessionId: string): Promise<SessionIssue | null> {
  const r = await db.query<{ data: SessionIssue }>(
    "SELECT data FROM events WHERE stream_id = $1 AND type = 'TaskStartedFromIssue' ORDER BY version LIMIT 1",
    [sessionId],
  );
  const d = r.rows[0]?.data;
  return d
    ? { provider: d.provider, repository: d.repository, issueNumber: d.issueNumber, issueUrl: d.issueUrl, trigger: d.trigger }
    : null;
}
