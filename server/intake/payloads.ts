// What a tracker's webhook delivery says, in one shape for both providers (docs/intake.md):
// which repository it is from, and — for an issue event — the issue and what happened to it
// (labels added, users assigned, a comment and its author). Pull-request events are told
// apart to be routed elsewhere. Only the fields intake reads are parsed (zod, loose): the
// rest of a payload is never kept.
import { z } from "zod";
import type { IntakeProvider } from "./rules";

export interface IssueRef {
  number: number;
  url: string;
  title: string;
  body: string;
}

export type TrackerDelivery =
  | {
      kind: "issue";
      repository: string;
      /** GitLab's numeric project id too (a rule may name the project by it). */
      projectNumber?: number;
      issue: IssueRef;
      sender: string;
      labelsAdded: string[];
      assigned: string[];
      comment?: { body: string; author: string; authorId?: number };
    }
  | { kind: "pull_request"; repository: string; projectNumber?: number }
  | { kind: "other"; repository: string | null; projectNumber?: number };

const ZUser = z.object({ login: z.string() });
const ZGithubIssue = z.object({
  number: z.number().int(),
  html_url: z.string(),
  title: z.string(),
  body: z.string().nullable().optional(),
  pull_request: z.unknown().optional(),
});
const ZGithub = z.object({
  action: z.string().optional(),
  repository: z.object({ full_name: z.string() }).optional(),
  sender: ZUser.optional(),
  issue: ZGithubIssue.optional(),
  label: z.object({ name: z.string() }).optional(),
  assignee: ZUser.nullable().optional(),
  comment: z.object({ body: z.string(), user: ZUser }).optional(),
});

const PULL_REQUEST_EVENTS = new Set(["pull_request", "pull_request_review", "pull_request_review_comment", "pull_request_review_thread"]);

export function githubDelivery(event: string, payload: unknown): TrackerDelivery {
  const p = ZGithub.safeParse(payload);
  const repository = p.success ? (p.data.repository?.full_name ?? null) : null;
  if (!p.success || !repository) return { kind: "other", repository };
  const d = p.data;
  if (PULL_REQUEST_EVENTS.has(event) || (event === "issue_comment" && d.issue?.pull_request !== undefined))
    return { kind: "pull_request", repository };
  if (!d.issue || (event !== "issues" && event !== "issue_comment")) return { kind: "other", repository };
  const issue = { number: d.issue.number, url: d.issue.html_url, title: d.issue.title, body: d.issue.body ?? "" };
  const sender = d.sender?.login ?? "";
  if (event === "issues")
    return {
      kind: "issue",
      repository,
      issue,
      sender,
      labelsAdded: d.action === "labeled" && d.label ? [d.label.name] : [],
      assigned: d.action === "assigned" && d.assignee ? [d.assignee.login] : [],
    };
  if (d.action !== "created" || !d.comment) return { kind: "other", repository };
  return {
    kind: "issue",
    repository,
    issue,
    sender,
    labelsAdded: [],
    assigned: [],
    comment: { body: d.comment.body, author: d.comment.user.login },
  };
}

const ZGitlabUser = z.object({ username: z.string(), id: z.number().int().optional() });
const ZGitlabLabels = z.array(z.object({ title: z.string() }));
const ZGitlab = z.object({
  object_kind: z.string(),
  user: ZGitlabUser.optional(),
  project: z.object({ path_with_namespace: z.string(), id: z.number().int().optional() }).optional(),
  object_attributes: z
    .object({
      iid: z.number().int().optional(),
      url: z.string().optional(),
      title: z.string().optional(),
      description: z.string().nullable().optional(),
      note: z.string().optional(),
      noteable_type: z.string().optional(),
      action: z.string().optional(),
    })
    .optional(),
  changes: z
    .object({
      labels: z.object({ previous: ZGitlabLabels, current: ZGitlabLabels }).optional(),
      assignees: z.object({ previous: z.array(ZGitlabUser), current: z.array(ZGitlabUser) }).optional(),
    })
    .optional(),
  issue: z
    .object({ iid: z.number().int(), title: z.string(), description: z.string().nullable().optional(), url: z.string().optional() })
    .optional(),
});

export function gitlabDelivery(payload: unknown): TrackerDelivery {
  const p = ZGitlab.safeParse(payload);
  const repository = p.success ? (p.data.project?.path_with_namespace ?? null) : null;
  if (!p.success || !repository) return { kind: "other", repository };
  const d = p.data;
  const projectNumber = d.project?.id;
  const at = d.object_attributes;
  const sender = d.user?.username ?? "";
  if (d.object_kind === "merge_request" || (d.object_kind === "note" && at?.noteable_type === "MergeRequest"))
    return { kind: "pull_request", repository, ...(projectNumber ? { projectNumber } : {}) };
  if (d.object_kind === "issue" && at?.iid !== undefined) {
    const names = (list: Array<{ title: string }> | undefined) => new Set((list ?? []).map((l) => l.title));
    const before = names(d.changes?.labels?.previous);
    const added = [...names(d.changes?.labels?.current)].filter((l) => !before.has(l));
    const was = new Set((d.changes?.assignees?.previous ?? []).map((u) => u.username));
    const assigned = (d.changes?.assignees?.current ?? []).map((u) => u.username).filter((u) => !was.has(u));
    return {
      kind: "issue",
      repository,
      ...(projectNumber ? { projectNumber } : {}),
      issue: { number: at.iid, url: at.url ?? "", title: at.title ?? "", body: at.description ?? "" },
      sender,
      labelsAdded: added,
      assigned,
    };
  }
  if (d.object_kind === "note" && at?.noteable_type === "Issue" && d.issue && at.note !== undefined) {
    return {
      kind: "issue",
      repository,
      ...(projectNumber ? { projectNumber } : {}),
      issue: {
        number: d.issue.iid,
        url: d.issue.url ?? at.url?.replace(/#note_\d+$/, "") ?? "",
        title: d.issue.title,
        body: d.issue.description ?? "",
      },
      sender,
      labelsAdded: [],
      assigned: [],
      comment: { body: at.note, author: sender, ...(d.user?.id !== undefined ? { authorId: d.user.id } : {}) },
    };
  }
  return { kind: "other", repository, ...(projectNumber ? { projectNumber } : {}) };
}

export type { IntakeProvider };
