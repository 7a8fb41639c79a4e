"use client";
// The message box with @mention completion: while the word at the caret starts with "@",
// the conversation's agents whose id or name begins with what follows are offered; ↑/↓
// choose, Enter or Tab inserts, Escape closes. A click inserts too.
import { useLayoutEffect, useRef, useState } from "react";

interface Agent {
  id: string;
  name: string;
  skills: string[];
}

/** The "@partial" word ending at `caret`, or null. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const match = /(^|\s)@([\w.-]*)$/.exec(text.slice(0, caret));
  return match ? { start: caret - match[2]!.length - 1, query: match[2]!.toLowerCase() } : null;
}

export function MentionComposer({ value, onChange, agents }: { value: string; onChange: (v: string) => void; agents: Agent[] }) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const caretAfterRender = useRef<number | null>(null);
  const [caret, setCaret] = useState(0);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState(false);
  const mention = mentionAt(value, caret);
  const options = mention
    ? agents.filter((a) => a.id.toLowerCase().startsWith(mention.query) || a.name.toLowerCase().startsWith(mention.query))
    : [];
  const open = !closed && options.length > 0;

  const insert = (agent: Agent) => {
    if (!mention) return;
    const next = `${value.slice(0, mention.start)}@${agent.id} ${value.slice(caret)}`;
    const at = mention.start + agent.id.length + 2;
    onChange(next);
    setCaret(at);
    caretAfterRender.current = at;
  };
  // The caret goes after the inserted mention in the same commit as the new text, before the
  // next key is handled (a frame later, a fast typist's next letter landed before it).
  useLayoutEffect(() => {
    if (caretAfterRender.current === null) return;
    ref.current?.setSelectionRange(caretAfterRender.current, caretAfterRender.current);
    caretAfterRender.current = null;
  });

  return (
    <div className="relative">
      <label htmlFor="message" className="sr-only">
        Message
      </label>
      <textarea
        id="message"
        ref={ref}
        value={value}
        rows={3}
        role="combobox"
        aria-expanded={open}
        aria-controls="mention-options"
        aria-autocomplete="list"
        placeholder="@coder-sim what do you think?"
        className="w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm text-zinc-900 shadow-sm outline-none focus:border-sky-600 focus:ring-2 focus:ring-sky-600 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100"
        onChange={(e) => {
          onChange(e.target.value);
          setCaret(e.target.selectionStart);
          setClosed(false);
          setActive(0);
        }}
        onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
        onKeyDown={(e) => {
          if (!open) return;
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            setActive((i) => (i + (e.key === "ArrowDown" ? 1 : options.length - 1)) % options.length);
          } else if (e.key === "Enter" || e.key === "Tab") {
            e.preventDefault();
            insert(options[Math.min(active, options.length - 1)]!);
          } else if (e.key === "Escape") {
            setClosed(true);
          }
        }}
      />
      {open ? (
        <ul
          id="mention-options"
          role="listbox"
          data-testid="mention-options"
          className="absolute z-10 mt-1 w-full max-w-sm overflow-hidden rounded-md border border-zinc-300 bg-white text-sm shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
        >
          {options.map((a, i) => (
            <li
              key={a.id}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                insert(a);
              }}
              className={`cursor-pointer px-3 py-1.5 ${i === active ? "bg-sky-100 text-sky-950 dark:bg-sky-900/60 dark:text-sky-50" : "text-zinc-900 dark:text-zinc-100"}`}
            >
              <span className="font-mono">@{a.id}</span>
              {a.name !== a.id ? <span className="ml-2 text-zinc-600 dark:text-zinc-400">{a.name}</span> : null}
              {a.skills.length ? <span className="ml-2 text-xs text-zinc-600 dark:text-zinc-400">{a.skills.join(", ")}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
