"use client";
// What an operator can do to a session, by its state: confirm the proposal (while it
// awaits confirm), follow up (while active), rerun (a fork with the same prompt), cancel
// (while active), resume (after an interruption), modify (once finished: a change, as a fork). Each calls the operator's tRPC procedure, which records who did it. A
// command that lost the race ("already moved on") says so and refreshes the view.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, type ReactNode, type RefObject } from "react";
import { ShortcutsToggle } from "@/components/keyboard-shortcuts";
import { Kbd, Panel } from "@/components/panel";
import { trpcErrorCode, useTRPC } from "@/lib/trpc/client";
import { INTERRUPTED_OUTCOMES } from "@/lib/outcomes";
import type { SessionStatus } from "@/server/sessions/view/progress";

export interface Notice {
  tone: "info" | "warn" | "error";
  text: string;
}

export type DialogKind = "confirm" | "cancel" | null;

export function useSessionCommands() {
  const trpc = useTRPC();
  const router = useRouter();
  const [notice, setNotice] = useState<Notice | null>(null);
  const onError = (err: unknown) => {
    const code = trpcErrorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    if (code === "CONFLICT" || code === "PRECONDITION_FAILED") {
      setNotice({ tone: "warn", text: `This session already moved on — ${message}. The view shows where it is now.` });
      router.refresh();
    } else if (code === "FORBIDDEN" || code === "UNAUTHORIZED") {
      setNotice({ tone: "error", text: `Not allowed: ${message}` });
    } else {
      setNotice({ tone: "error", text: message });
    }
  };
  const onSuccess = () => setNotice(null);
  const confirm = useMutation(trpc.tasks.confirm.mutationOptions({ onError, onSuccess }));
  const followUp = useMutation(trpc.tasks.followUp.mutationOptions({ onError, onSuccess }));
  const cancel = useMutation(trpc.tasks.cancel.mutationOptions({ onError, onSuccess }));
  const toNewSession = (result: { sessionId: string }) => router.push(`/sessions/${result.sessionId}`);
  const rerun = useMutation(trpc.tasks.rerun.mutationOptions({ onError, onSuccess: toNewSession }));
  const modify = useMutation(trpc.sessions.modify.mutationOptions({ onError, onSuccess: toNewSession }));
  const resume = useMutation(
    trpc.sessions.resume.mutationOptions({
      onError,
      onSuccess: (result) => {
        setNotice({ tone: "info", text: result.message });
        router.refresh();
      },
    }),
  );
  return {
    notice,
    setNotice,
    confirm,
    followUp,
    cancel,
    rerun,
    modify,
    resume,
    busy: confirm.isPending || followUp.isPending || cancel.isPending || rerun.isPending || modify.isPending || resume.isPending,
  };
}

export type SessionCommands = ReturnType<typeof useSessionCommands>;

// Colours fade on hover; a button made busy (disabled) dims at once: a fade of its opacity
// drew frames for 150 ms at the moment a command is sent.
const BUTTON =
  "inline-flex items-center justify-center gap-2 rounded-md px-3 py-1.5 text-xs font-medium shadow-sm transition-colors focus-visible:ring-2 focus-visible:outline-none disabled:cursor-not-allowed disabled:opacity-50";
export const BUTTON_STYLES = {
  primary: `${BUTTON} bg-zinc-900 text-white hover:bg-zinc-800 focus-visible:ring-zinc-900 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-white`,
  confirm: `${BUTTON} bg-emerald-700 text-white hover:bg-emerald-800 focus-visible:ring-emerald-700 dark:bg-emerald-500 dark:text-emerald-950 dark:hover:bg-emerald-400`,
  secondary: `${BUTTON} border border-zinc-300 bg-white text-zinc-800 hover:bg-zinc-50 focus-visible:ring-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-200 dark:hover:bg-zinc-800`,
  danger: `${BUTTON} border border-rose-300 bg-white text-rose-700 hover:bg-rose-50 focus-visible:ring-rose-600 dark:border-rose-900 dark:bg-zinc-900 dark:text-rose-300 dark:hover:bg-rose-950/50`,
};

export function NoticeBar({ notice, onClose }: { notice: Notice; onClose: () => void }) {
  const tone = {
    info: "border-zinc-200 bg-white text-zinc-700 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-300",
    warn: "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-900/70 dark:bg-amber-950/40 dark:text-amber-200",
    error: "border-rose-300 bg-rose-50 text-rose-800 dark:border-rose-900/70 dark:bg-rose-950/40 dark:text-rose-200",
  }[notice.tone];
  return (
    <div
      role={notice.tone === "info" ? "status" : "alert"}
      data-testid="notice"
      className={`flex items-start gap-3 rounded-md border px-3 py-2 text-xs ${tone}`}
    >
      <span className="flex-1 leading-5">{notice.text}</span>
      <button type="button" onClick={onClose} className="text-current opacity-60 hover:opacity-100" aria-label="Dismiss">
        ✕
      </button>
    </div>
  );
}

export function ActionsPanel({
  sessionId,
  status,
  commands,
  followUpRef,
  openDialog,
}: {
  sessionId: string;
  status: SessionStatus;
  commands: SessionCommands;
  followUpRef: RefObject<HTMLTextAreaElement | null>;
  openDialog: (kind: DialogKind) => void;
}) {
  const [text, setText] = useState("");
  const awaiting = status.state === "awaiting_operator_confirm" && status.status === "active";
  const active = status.status === "active";
  // A bake-off's parent is not cancelled: it is picked or dismissed (docs/bake-off.md).
  const cancellable = active && status.state !== "bake_off";
  const isTask = status.status !== "none";
  const send = () => {
    const value = text.trim();
    if (!value || commands.followUp.isPending) return;
    commands.followUp.mutate({ sessionId, text: value }, { onSuccess: () => setText("") });
  };
  return (
    <Panel title="Actions" meta={<span className="font-mono text-xs">operator</span>}>
      <div className="space-y-3 px-4 py-3" data-testid="actions">
        {awaiting ? (
          <button
            type="button"
            data-testid="confirm-button"
            className={`${BUTTON_STYLES.confirm} w-full`}
            disabled={commands.busy}
            onClick={() => openDialog("confirm")}
          >
            Confirm the proposal <Kbd>c</Kbd>
          </button>
        ) : null}
        {active ? (
          <div className="space-y-1.5">
            <label htmlFor="follow-up" className="flex items-center justify-between text-xs font-medium text-zinc-700 dark:text-zinc-300">
              Follow-up <Kbd>f</Kbd>
            </label>
            <textarea
              id="follow-up"
              ref={followUpRef}
              data-testid="follow-up"
              value={text}
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) {
                  e.preventDefault();
                  send();
                }
                if (e.key === "Escape") e.currentTarget.blur();
              }}
              rows={3}
              maxLength={20_000}
              placeholder={awaiting ? "Ask for changes to the proposal, or write /confirm…" : "Add context for the agents…"}
              className="block w-full resize-y rounded-md border border-zinc-300 bg-white px-2.5 py-1.5 text-[13px] text-zinc-900 shadow-sm outline-none placeholder:text-zinc-500 focus:border-zinc-900 focus:ring-2 focus:ring-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-600 dark:focus:border-zinc-400 dark:focus:ring-zinc-400"
            />
            <div className="flex items-center justify-between gap-2">
              <span className="text-xs text-zinc-500 dark:text-zinc-400">
                <Kbd>⌘/Ctrl</Kbd> <Kbd>↵</Kbd> sends
              </span>
              <button
                type="button"
                data-testid="follow-up-send"
                className={BUTTON_STYLES.primary}
                disabled={!text.trim() || commands.followUp.isPending}
                onClick={send}
              >
                {commands.followUp.isPending ? "Sending…" : "Send"}
              </button>
            </div>
          </div>
        ) : null}
        {isTask ? (
          <div className={`flex flex-wrap gap-2 ${active ? "border-t border-zinc-100 pt-3 dark:border-zinc-800" : ""}`}>
            <button
              type="button"
              data-testid="rerun-button"
              className={BUTTON_STYLES.secondary}
              disabled={commands.busy}
              onClick={() => commands.rerun.mutate({ sessionId })}
              title="Start again with the same prompt and configuration, as a fork of this session"
            >
              {commands.rerun.isPending ? "Starting…" : "Rerun"}
            </button>
            {status.outcome && INTERRUPTED_OUTCOMES.includes(status.outcome) ? (
              <button
                type="button"
                data-testid="resume-button"
                className={BUTTON_STYLES.primary}
                disabled={commands.busy}
                onClick={() => commands.resume.mutate({ sessionId })}
                title="Continue from the step that was interrupted; nothing that completed runs again"
              >
                {commands.resume.isPending ? "Resuming…" : "Resume"}
              </button>
            ) : null}
            {cancellable ? (
              <button
                type="button"
                data-testid="cancel-button"
                className={BUTTON_STYLES.danger}
                disabled={commands.busy}
                onClick={() => openDialog("cancel")}
              >
                Cancel session
              </button>
            ) : null}
          </div>
        ) : null}
        {status.status === "finished" && status.modifiable ? <ModifyForm sessionId={sessionId} commands={commands} /> : null}
        {active ? <ShortcutsToggle /> : null}
      </div>
    </Panel>
  );
}

/** From a finished session: describe a change, and a modify fork makes it (req F5). */
function ModifyForm({ sessionId, commands }: { sessionId: string; commands: SessionCommands }) {
  const [change, setChange] = useState("");
  const submit = () => {
    const value = change.trim();
    if (value && !commands.modify.isPending) commands.modify.mutate({ sessionId, change: value });
  };
  return (
    <form
      className="space-y-1.5 border-t border-zinc-100 pt-3 dark:border-zinc-800"
      data-testid="modify-form"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label htmlFor="modify-change" className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
        Modify: describe a change
      </label>
      <textarea
        id="modify-change"
        data-testid="modify-change"
        value={change}
        onChange={(e) => setChange(e.target.value)}
        rows={2}
        maxLength={20_000}
        placeholder="A new session builds it from this one's result; this one stays as it is."
        className="block w-full resize-y rounded-md border border-zinc-300 bg-white px-2.5 py-1.5 text-[13px] text-zinc-900 shadow-sm outline-none placeholder:text-zinc-500 focus:border-zinc-900 focus:ring-2 focus:ring-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-500 dark:focus:border-zinc-400 dark:focus:ring-zinc-400"
      />
      <div className="flex justify-end">
        <button type="submit" data-testid="modify-submit" className={BUTTON_STYLES.secondary} disabled={!change.trim() || commands.busy}>
          {commands.modify.isPending ? "Starting…" : "Start the change"}
        </button>
      </div>
    </form>
  );
}

/** A modal question with one default action: Enter does it, Escape closes. */
export function ConfirmDialog({
  open,
  testId,
  title,
  children,
  actionLabel,
  tone,
  pending,
  onAction,
  onClose,
}: {
  open: boolean;
  testId: string;
  title: string;
  children: ReactNode;
  actionLabel: string;
  tone: "confirm" | "danger";
  pending: boolean;
  onAction: () => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const actionRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      // showModal focuses the first button ("Not now"); Enter must do the action instead.
      actionRef.current?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  // The page behind is dimmed, not blurred: a backdrop filter is drawn again over the whole
  // viewport at every frame anything animates (the live dot), and while the dialog is open that
  // drew as much as the rest of the page on a machine without a GPU (docs/scaling.md, "First
  // output and live paint").
  return (
    <dialog
      ref={ref}
      data-testid={testId}
      onClose={onClose}
      onCancel={onClose}
      className="m-auto w-[min(440px,calc(100vw-2rem))] rounded-lg border border-zinc-200 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-zinc-950/50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
    >
      {open ? (
        <form
          method="dialog"
          onSubmit={(e) => {
            e.preventDefault();
            onAction();
          }}
        >
          <div className="space-y-2 px-5 pt-4 pb-3">
            <h2 className="text-sm font-semibold">{title}</h2>
            <div className="text-xs leading-relaxed text-zinc-600 dark:text-zinc-300">{children}</div>
          </div>
          <div className="flex justify-end gap-2 border-t border-zinc-100 bg-zinc-50 px-5 py-3 dark:border-zinc-800 dark:bg-zinc-950/40">
            <button type="button" className={BUTTON_STYLES.secondary} onClick={onClose}>
              Not now <Kbd>esc</Kbd>
            </button>
            <button
              type="submit"
              ref={actionRef}
              data-testid="confirm-dialog-action"
              className={tone === "confirm" ? BUTTON_STYLES.confirm : BUTTON_STYLES.danger}
              disabled={pending}
            >
              {pending ? "Working…" : actionLabel} <Kbd>↵</Kbd>
            </button>
          </div>
        </form>
      ) : null}
    </dialog>
  );
}
