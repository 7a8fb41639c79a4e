"use client";
// The session view's client root: live state from the subscription, the header, the
// running step, proposal review while it awaits confirm, the timeline, and (for
// operators) the actions with their keyboard shortcuts: `c` confirm (asks first), `f`
// follow-up, Escape to leave either. After Confirm or Cancel, focus moves to the session's
// state (a live region), so a screen reader says where the session went.
import { useEffect, useMemo, useRef, useState } from "react";
import { singleKeyShortcutsOn } from "@/components/keyboard-shortcuts";
import { Kbd, Panel } from "@/components/panel";
import { SimulatedNote } from "@/components/simulated-note";
import { FEEDBACK_EVENT_TYPES } from "@/lib/feedback";
import { DeliveryPanel } from "./delivery-panel";
import { WorkspacePanel } from "./workspace-panel";
import { FeedbackPanel } from "./feedback-panel";
import { ForgePanel } from "./forge-panel";
import type { SessionView as View } from "@/server/sessions/view/load";
import { ProposalReview } from "./proposal-review";
import { RunningStep } from "./running-step";
import { ActionsPanel, ConfirmDialog, NoticeBar, useSessionCommands, type DialogKind } from "./session-actions";
import { SessionContextProvider } from "./session-context";
import { SessionHeader } from "./session-header";
import { SummaryPanel } from "./summary-panel";
import { UsagePanel } from "./usage-panel";
import { isBookkeeping, Timeline } from "./timeline";
import { TimelineAnnouncer } from "./timeline-announcer";
import { JumpToLatest, LoadOlder, useFollowEnd, useTimelineEnd } from "./timeline-paging";
import { useLiveSession } from "./use-live-session";

/** From this many entries on, "Jump to latest" shows while the timeline's end is out of view. */
const LONG_TIMELINE = 100;

function typingIn(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

export function SessionView({ initial, canOperate, me }: { initial: View; canOperate: boolean; me: string }) {
  const sessionId = initial.header.id;
  const live = useLiveSession(initial);
  const { status, entries, names } = live;
  const commands = useSessionCommands();
  const [dialog, setDialog] = useState<DialogKind>(null);
  const [showBookkeeping, setShowBookkeeping] = useState(false);
  const followUpRef = useRef<HTMLTextAreaElement>(null);
  const stateRef = useRef<HTMLSpanElement>(null);
  const timelineEnd = useRef<HTMLDivElement>(null);
  const pageEnd = useRef<HTMLDivElement>(null);
  // A long session (earlier pages not loaded) opens at its latest entries; a Forge session
  // opens at its pipeline view instead (the stage row and the gate's buttons, docs/forge.md).
  const forge = initial.header.workflow === "forge";
  const [openAtLatest] = useState(initial.omitted > 0 && !forge);
  const endAway = useTimelineEnd(timelineEnd, openAtLatest);
  const long = live.earlier > 0 || entries.length >= LONG_TIMELINE;
  // Set when an action succeeded: once its dialog has closed (and handed focus back to
  // where it came from), focus goes to the state instead.
  const [focusState, setFocusState] = useState(false);
  const awaiting = status.state === "awaiting_operator_confirm" && status.status === "active";

  const focusFollowUp = () => {
    followUpRef.current?.focus();
    followUpRef.current?.scrollIntoView({ block: "center", behavior: "smooth" });
  };

  // A confirm dialog left open when the session moves on (someone else confirmed) closes.
  useEffect(() => {
    if (dialog === "confirm" && !awaiting) setDialog(null);
    if (dialog === "cancel" && status.status !== "active") setDialog(null);
  }, [dialog, awaiting, status.status]);

  useEffect(() => {
    if (!focusState || dialog !== null) return;
    stateRef.current?.focus();
    setFocusState(false);
  }, [focusState, dialog]);

  useEffect(() => {
    if (!canOperate) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey || typingIn(e.target) || dialog || !singleKeyShortcutsOn()) return;
      if (e.key === "c" && awaiting) {
        e.preventDefault();
        setDialog("confirm");
      } else if (e.key === "f" && status.status === "active") {
        e.preventDefault();
        focusFollowUp();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [canOperate, awaiting, dialog, status.status]);

  // Keep following the newest entries when the reader is already at the page's bottom (older
  // entries loaded above do not count), through a burst of them (useFollowEnd). Asked of an
  // observer, not of the page's layout: a layout forced for each arriving entry took the
  // browser's time while a step starts (docs/scaling.md, "First output and live paint"). On a Forge session only once the reader
  // went down to the timeline: at the top, before the pipeline view has loaded, the page is
  // short enough to show the end, and following would carry the gate out of view.
  const newest = entries.at(-1)?.version ?? 0;
  const lastNewest = useRef(newest);
  const follow = useFollowEnd(pageEnd);
  useEffect(() => {
    const arrived = newest > lastNewest.current;
    lastNewest.current = newest;
    if (!arrived || !follow.follows()) return;
    // In the next frame, laid out once for what it draws anyway.
    requestAnimationFrame(() => {
      if (forge && window.scrollY === 0) return;
      follow.followed();
      pageEnd.current?.scrollIntoView({ block: "end", behavior: "smooth" });
    });
  }, [newest, forge, follow]);

  const hidden = entries.filter(isBookkeeping).length;
  // The pipeline view reads its status again when a fact is recorded, not for each chunk of streamed output.
  const factVersion = useMemo(() => entries.findLast((e) => e.detail.kind !== "agent_streamed")?.version ?? 0, [entries]);
  // The feedback history, only when a piece of feedback is recorded.
  const feedbackVersion = useMemo(() => entries.findLast((e) => FEEDBACK_EVENT_TYPES.includes(e.type))?.version ?? 0, [entries]);
  const usageVersion = useMemo(() => entries.findLast((e) => e.type === "AgentOutputRecorded")?.version ?? 0, [entries]);
  // One value while the names stay the same: every timeline entry reads it, and a new value
  // would draw each of them again at every render of the view (a click, a live batch).
  const context = useMemo(() => ({ sessionId, names }), [sessionId, names]);

  return (
    <SessionContextProvider value={context}>
      <div className="space-y-4">
        <SessionHeader
          header={initial.header}
          status={status}
          names={names}
          connection={live.connection}
          eventCount={status.version}
          stateRef={stateRef}
        />
        {initial.header.simulated ? <SimulatedNote workflow={initial.header.workflow} projectId={initial.header.projectId} /> : null}
        {live.connectionError ? (
          <NoticeBar
            notice={{ tone: "warn", text: `Live updates stopped: ${live.connectionError}. Reload the page to reconnect.` }}
            onClose={() => {}}
          />
        ) : null}
        {commands.notice ? <NoticeBar notice={commands.notice} onClose={() => commands.setNotice(null)} /> : null}
        <RunningStep status={status} entries={entries} />
        {status.workflow === "forge" ? <ForgePanel sessionId={sessionId} version={factVersion} canOperate={canOperate} /> : null}
        {awaiting ? (
          <ProposalReview
            entries={entries}
            canOperate={canOperate}
            busy={commands.busy}
            onConfirm={() => setDialog("confirm")}
            onFollowUp={focusFollowUp}
          />
        ) : null}
        <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-[minmax(0,1fr)_340px]">
          <Panel
            title="Timeline"
            meta={
              <label className="flex cursor-pointer items-center gap-1.5 select-none">
                <input
                  type="checkbox"
                  data-testid="toggle-step-events"
                  checked={showBookkeeping}
                  onChange={(e) => setShowBookkeeping(e.target.checked)}
                  className="size-3 accent-zinc-700"
                />
                step events ({hidden})
              </label>
            }
          >
            <LoadOlder
              earlier={live.earlier}
              sessionId={sessionId}
              loading={live.older.loading}
              error={live.older.error}
              onLoad={live.older.load}
            />
            <Timeline entries={entries} showBookkeeping={showBookkeeping} />
            <div ref={timelineEnd} data-testid="timeline-end" />
            <TimelineAnnouncer entries={entries} />
          </Panel>
          <aside className="space-y-4 lg:sticky lg:top-16">
            {canOperate ? (
              <ActionsPanel sessionId={sessionId} status={status} commands={commands} followUpRef={followUpRef} openDialog={setDialog} />
            ) : (
              <Panel title="Actions" meta={<span className="font-mono text-xs">viewer</span>}>
                <p data-testid="viewer-note" className="px-4 py-3 text-xs leading-relaxed text-zinc-500 dark:text-zinc-400">
                  You can read this session. Confirming, following up, rerunning and cancelling need the operator role.
                </p>
              </Panel>
            )}
            {status.status === "finished" ? (
              <DeliveryPanel sessionId={sessionId} outcome={status.outcome} canOperate={canOperate} version={factVersion} />
            ) : null}
            {status.status === "finished" ? (
              <WorkspacePanel sessionId={sessionId} outcome={status.outcome} canOperate={canOperate} version={factVersion} />
            ) : null}
            <SummaryPanel status={status} entries={entries} />
            <UsagePanel sessionId={sessionId} version={usageVersion} />
            <FeedbackPanel sessionId={sessionId} version={feedbackVersion} />
            {canOperate && status.status === "active" ? (
              <Panel title="Keyboard">
                <ul className="space-y-1 px-4 py-3 text-xs text-zinc-600 dark:text-zinc-300">
                  {status.workflow !== "forge" ? (
                    <li className="flex justify-between">
                      Confirm the proposal <Kbd>c</Kbd>
                    </li>
                  ) : null}
                  <li className="flex justify-between">
                    Write a follow-up <Kbd>f</Kbd>
                  </li>
                  <li className="flex justify-between">
                    Send it{" "}
                    <span>
                      <Kbd>⌘/Ctrl</Kbd> <Kbd>↵</Kbd>
                    </span>
                  </li>
                  <li className="flex justify-between">
                    Close a dialog, leave the box <Kbd>esc</Kbd>
                  </li>
                </ul>
              </Panel>
            ) : null}
          </aside>
        </div>
        {long && endAway ? <JumpToLatest end={timelineEnd} /> : null}
        <div ref={pageEnd} aria-hidden />
      </div>
      {canOperate ? (
        <>
          <ConfirmDialog
            open={dialog === "confirm"}
            testId="confirm-dialog"
            title="Confirm the proposal?"
            actionLabel="Confirm"
            tone="confirm"
            pending={commands.confirm.isPending}
            onClose={() => setDialog(null)}
            onAction={() =>
              commands.confirm.mutate(
                { sessionId, via: "button" },
                { onSuccess: () => setFocusState(true), onSettled: () => setDialog(null) },
              )
            }
          >
            The coder starts building in this session, then the reviewer and the tester check the change. The timeline records that{" "}
            <b>{me}</b> confirmed.
          </ConfirmDialog>
          <ConfirmDialog
            open={dialog === "cancel"}
            testId="cancel-dialog"
            title="Cancel this session?"
            actionLabel="Cancel session"
            tone="danger"
            pending={commands.cancel.isPending}
            onClose={() => setDialog(null)}
            onAction={() =>
              commands.cancel.mutate({ sessionId }, { onSuccess: () => setFocusState(true), onSettled: () => setDialog(null) })
            }
          >
            The running agent is stopped within a second and the session ends <code className="font-mono">cancelled</code>. Its history
            stays; you can rerun it later.
          </ConfirmDialog>
        </>
      ) : null}
    </SessionContextProvider>
  );
}
