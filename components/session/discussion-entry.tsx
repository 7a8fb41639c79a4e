"use client";
// Roundtable prose (phase "discussion"): a speech bubble per agent, labelled as discussion
// (and "simulated" for scripted agents), so it never reads like an approval verdict
// (req W11).
import { ClampedText, Tag } from "./bits";
import type { EntryOf } from "./entry-types";
import { capitalize } from "./format";
import { RoleAvatar, roleStyle } from "./role-style";
import { FullOutput } from "./session-output";

export function DiscussionEntry({ entry }: { entry: EntryOf<"agent_output"> }) {
  const d = entry.detail;
  const style = roleStyle(d.role);
  const previewIsWhole = d.raw.size <= new TextEncoder().encode(d.preview).length;
  return (
    <div data-testid="discussion-entry" data-role={d.role} className="flex gap-2.5">
      <RoleAvatar role={d.role} />
      <div className="min-w-0 flex-1">
        <div className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs">
          <span className={`font-semibold ${style.text}`}>{capitalize(d.role)}</span>
          <span className="font-mono text-xs text-zinc-500 dark:text-zinc-400">{d.agentId}</span>
          <Tag tone="sky">discussion</Tag>
          {d.simulated ? (
            <Tag tone="amber" title="A scripted agent: its words are canned, not a model's">
              simulated
            </Tag>
          ) : null}
        </div>
        <div
          className={`mt-1 rounded-lg rounded-tl-sm border px-3 py-2 text-[13px] leading-relaxed text-zinc-800 dark:text-zinc-200 ${style.bubble}`}
        >
          <ClampedText text={d.preview} />
        </div>
        {previewIsWhole ? null : (
          <div className="mt-1">
            <FullOutput blob={d.raw} />
          </div>
        )}
      </div>
    </div>
  );
}
