"use client";
// Large outputs, fetched only when opened (req E7): an agent's raw reply, with its parsed
// JSON shown as structured data first when there is one, and a commit's diff.
import { useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { useTRPC } from "@/lib/trpc/client";
import type { BlobRef } from "@/server/events/blobs";
import type { JsonValue } from "@/server/sessions/view/entries";
import { DiffView } from "./diff-view";
import { formatBytes } from "./format";
import { JsonView } from "./json-view";
import { useSessionContext } from "./session-context";

function useOutput(blob: BlobRef, enabled: boolean) {
  const trpc = useTRPC();
  const { sessionId } = useSessionContext();
  return useQuery({ ...trpc.live.output.queryOptions({ sessionId, blob: blob.blob }), enabled, staleTime: Infinity });
}

/** Renders `children(text)` once the blob is loaded; loading and error states in between. */
function LoadedOutput({ blob, children }: { blob: BlobRef; children: (text: string) => ReactNode }) {
  const output = useOutput(blob, true);
  if (output.isPending) return <p className="px-3 py-2 text-xs text-zinc-500 dark:text-zinc-400">Loading {formatBytes(blob.size)}…</p>;
  if (output.isError)
    return <p className="px-3 py-2 text-xs text-rose-700 dark:text-rose-400">Could not load the output: {output.error.message}</p>;
  return (
    <>
      {children(output.data.text)}
      {output.data.truncated ? (
        <p className="border-t border-zinc-200 px-3 py-1.5 text-xs text-amber-700 dark:border-zinc-800 dark:text-amber-300">
          truncated: showing the first {formatBytes(output.data.text.length)} of {formatBytes(output.data.size)} — the export has it all
        </p>
      ) : null}
    </>
  );
}

export function RawText({ text }: { text: string }) {
  return (
    <pre
      tabIndex={0}
      role="region"
      aria-label="Output"
      className="max-h-[480px] overflow-auto px-3 py-2 font-mono text-xs leading-5 whitespace-pre-wrap text-zinc-800 dark:text-zinc-200"
    >
      {text}
    </pre>
  );
}

export function ToggleButton({
  open,
  onClick,
  children,
  testId,
}: {
  open: boolean;
  onClick: () => void;
  children: ReactNode;
  testId?: string;
}) {
  return (
    <button
      type="button"
      onClick={onClick}
      aria-expanded={open}
      data-testid={testId}
      className="inline-flex items-center gap-1 rounded px-1.5 py-0.5 text-xs font-medium text-zinc-500 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-100"
    >
      <span aria-hidden className={`inline-block transition-transform ${open ? "rotate-90" : ""}`}>
        ▸
      </span>
      {children}
    </button>
  );
}

/** "Full output" for prose: the raw reply, loaded on first open. */
export function FullOutput({ blob, label = "Full output" }: { blob: BlobRef; label?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div>
      <ToggleButton open={open} onClick={() => setOpen(!open)} testId="full-output-toggle">
        {label} · {formatBytes(blob.size)}
      </ToggleButton>
      {open ? (
        <div className="mt-1 overflow-hidden rounded-md border border-zinc-200 bg-zinc-50 dark:border-zinc-800 dark:bg-zinc-950">
          <LoadedOutput blob={blob}>{(text) => <RawText text={text} />}</LoadedOutput>
        </div>
      ) : null}
    </div>
  );
}

/** Structured output: the parsed JSON as data, the raw text one click away. */
export function StructuredOutput({ parsed, raw }: { parsed: JsonValue; raw: BlobRef }) {
  const [open, setOpen] = useState(false);
  const [tab, setTab] = useState<"parsed" | "raw">("parsed");
  return (
    <div>
      <ToggleButton open={open} onClick={() => setOpen(!open)} testId="structured-output-toggle">
        Output · parsed JSON
      </ToggleButton>
      {open ? (
        <div className="mt-1 overflow-hidden rounded-md border border-zinc-200 bg-zinc-50 dark:border-zinc-800 dark:bg-zinc-950">
          <div role="tablist" className="flex gap-1 border-b border-zinc-200 px-2 py-1 dark:border-zinc-800">
            {(["parsed", "raw"] as const).map((t) => (
              <button
                key={t}
                role="tab"
                type="button"
                aria-selected={tab === t}
                onClick={() => setTab(t)}
                className={`rounded px-2 py-0.5 text-xs font-medium ${tab === t ? "bg-white text-zinc-900 shadow-sm dark:bg-zinc-800 dark:text-zinc-100" : "text-zinc-500 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100"}`}
              >
                {t === "parsed" ? "Parsed" : `Raw · ${formatBytes(raw.size)}`}
              </button>
            ))}
          </div>
          {tab === "parsed" ? (
            <div className="max-h-[480px] overflow-auto px-3 py-2">
              <JsonView value={parsed} />
            </div>
          ) : (
            <LoadedOutput blob={raw}>{(text) => <RawText text={text} />}</LoadedOutput>
          )}
        </div>
      ) : null}
    </div>
  );
}

/** A commit's diff, loaded on first open. */
export function DiffToggle({ diff, initiallyOpen = false }: { diff: BlobRef; initiallyOpen?: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <div>
      <ToggleButton open={open} onClick={() => setOpen(!open)} testId="diff-toggle">
        Diff · {formatBytes(diff.size)}
      </ToggleButton>
      {open ? (
        <div className="mt-1">
          <LoadedOutput blob={diff}>{(text) => <DiffView text={text} />}</LoadedOutput>
        </div>
      ) : null}
    </div>
  );
}
