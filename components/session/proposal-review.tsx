"use client";
// Proposal review (issue item 4): while the session awaits an operator's confirm, the
// coder's proposal and the reviewer's and tester's critiques side by side, with "Confirm"
// and "Follow up instead". Viewers see the same without the buttons.
import { Kbd, Panel } from "@/components/panel";
import type { SessionEntry } from "@/server/sessions/view/entries";
import { ClampedText, Tag } from "./bits";
import { isKind, type EntryOf } from "./entry-types";
import { capitalize } from "./format";
import { RoleAvatar, roleStyle } from "./role-style";
import { BUTTON_STYLES } from "./session-actions";
import { FullOutput } from "./session-output";

/** The latest discussion output of each role. */
function latestDiscussion(entries: SessionEntry[]): Map<string, EntryOf<"agent_output">> {
  const byRole = new Map<string, EntryOf<"agent_output">>();
  for (const e of entries) if (isKind(e, "agent_output") && e.detail.phase === "discussion") byRole.set(e.detail.role, e);
  return byRole;
}

export function ProposalReview({
  entries,
  canOperate,
  busy,
  onConfirm,
  onFollowUp,
}: {
  entries: SessionEntry[];
  canOperate: boolean;
  busy: boolean;
  onConfirm: () => void;
  onFollowUp: () => void;
}) {
  const discussion = latestDiscussion(entries);
  const proposal = discussion.get("coder");
  const critiques = [...discussion.entries()].filter(([role]) => role !== "coder").map(([, e]) => e);
  return (
    <Panel
      title="Proposal review"
      meta={<span className="text-amber-700 dark:text-amber-300">waiting for an operator&apos;s confirm</span>}
      className="border-amber-300/70 dark:border-amber-900/70"
    >
      <div
        data-testid="proposal-review"
        className="grid grid-cols-1 divide-y divide-zinc-200 lg:grid-cols-2 lg:divide-x lg:divide-y-0 dark:divide-zinc-800"
      >
        <div className="min-w-0 px-4 py-3">
          {proposal ? (
            <Contribution entry={proposal} heading="Proposal" />
          ) : (
            <p className="text-xs text-zinc-500 dark:text-zinc-400">No proposal was recorded.</p>
          )}
        </div>
        <div className="min-w-0 space-y-4 px-4 py-3">
          {critiques.length ? (
            critiques.map((e) => <Contribution key={e.version} entry={e} heading="Critique" />)
          ) : (
            <p className="text-xs text-zinc-500 dark:text-zinc-400">No critiques were recorded.</p>
          )}
        </div>
      </div>
      <div className="flex flex-wrap items-center gap-2 border-t border-zinc-200 bg-zinc-50/70 px-4 py-2.5 dark:border-zinc-800 dark:bg-zinc-950/30">
        {canOperate ? (
          <>
            <button type="button" data-testid="proposal-confirm" className={BUTTON_STYLES.confirm} disabled={busy} onClick={onConfirm}>
              Confirm <Kbd>c</Kbd>
            </button>
            <button type="button" data-testid="proposal-follow-up" className={BUTTON_STYLES.secondary} onClick={onFollowUp}>
              Follow up instead <Kbd>f</Kbd>
            </button>
            <span className="ml-auto text-xs text-zinc-500 dark:text-zinc-400">
              Confirming starts the build in this session and records you as the one who confirmed.
            </span>
          </>
        ) : (
          <span className="text-xs text-zinc-500 dark:text-zinc-400">
            An operator confirms the proposal or follows up. You can read along.
          </span>
        )}
      </div>
    </Panel>
  );
}

function Contribution({ entry, heading }: { entry: EntryOf<"agent_output">; heading: string }) {
  const d = entry.detail;
  return (
    <article data-testid={`proposal-${d.role}`} className="min-w-0">
      <header className="mb-1.5 flex flex-wrap items-center gap-2 text-xs">
        <RoleAvatar role={d.role} />
        <span className={`font-semibold ${roleStyle(d.role).text}`}>{capitalize(d.role)}</span>
        <span className="text-zinc-500 dark:text-zinc-400">{heading}</span>
        <Tag tone="sky">discussion</Tag>
        {d.simulated ? <Tag tone="amber">simulated</Tag> : null}
      </header>
      <ClampedText text={d.preview} className="text-[13px] leading-relaxed text-zinc-800 dark:text-zinc-200" />
      {d.raw.size > new TextEncoder().encode(d.preview).length ? (
        <div className="mt-1">
          <FullOutput blob={d.raw} />
        </div>
      ) : null}
    </article>
  );
}
