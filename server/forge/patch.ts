// A modify session's patch (req F5): what the change did to the code, computed from git by
// the runner — never written by an agent — and the plan tasks it kept. The report's "Patch"
// section is rendered from it, so the report always matches the diff.
import crypto from "node:crypto";
import type { Patch } from "./artifacts";

/** sha-256 of each plan task, by id: how a modify session counts the tasks it kept. */
export function planDigest(plan: unknown): Record<string, string> {
  const tasks = (plan as { tasks?: Array<{ id?: unknown; status?: unknown }> } | undefined)?.tasks ?? [];
  const digest: Record<string, string> = {};
  for (const { status: _status, ...task } of tasks) {
    // A task's status moves as the work goes on; the task itself is what it asks for.
    if (typeof task.id === "string") digest[task.id] = crypto.createHash("sha256").update(JSON.stringify(task)).digest("hex");
  }
  return digest;
}

/** The base plan's tasks against the plan now: kept unchanged, changed, added, removed. */
export function planDelta(base: Record<string, string>, now: Record<string, string>): Patch["tasks"] {
  let kept = 0;
  let changed = 0;
  for (const [id, hash] of Object.entries(now)) {
    if (base[id] === undefined) continue;
    if (base[id] === hash) kept++;
    else changed++;
  }
  return {
    kept,
    changed,
    added: Object.keys(now).filter((id) => base[id] === undefined).length,
    removed: Object.keys(base).filter((id) => now[id] === undefined).length,
  };
}

/** The report's "## Patch" section, rendered from the patch. */
export function patchSection(patch: Patch): string {
  const lines = [
    "## Patch",
    "",
    `Base ${patch.baseCommit.slice(0, 12)} → ${patch.headCommit.slice(0, 12)}: ${patch.files.length} file(s), +${patch.added} −${patch.removed}.`,
    `Plan tasks: ${patch.tasks.kept} kept, ${patch.tasks.changed} changed, ${patch.tasks.added} added, ${patch.tasks.removed} removed.`,
    "",
    "| File | Status | + | − |",
    "| --- | --- | --- | --- |",
    ...patch.files.map((f) => `| \`${f.path.replace(/[|`]/g, "\\$&")}\` | ${f.status} | ${f.added} | ${f.removed} |`),
  ];
  return `${lines.join("\n")}\n`;
}
