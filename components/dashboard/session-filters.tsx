"use client";
// The dashboard's filter bar: a GET form whose fields are the URL's query parameters, so
// every view is a shareable link. Selects apply at once; the search applies on Enter.
// `/` focuses the search box.
import { stateLabel } from "@/lib/state-labels";
import { singleKeyShortcutsOn } from "../keyboard-shortcuts";
import Form from "next/form";
import { useEffect, useRef } from "react";

export interface FilterValues {
  q?: string;
  state?: string;
  project?: string;
  workflow?: string;
  mine: boolean;
  limit: number;
}

const CONTROL =
  "h-8 rounded-md border border-zinc-300 bg-white px-2 text-xs text-zinc-800 shadow-sm outline-none focus:border-zinc-900 focus:ring-2 focus:ring-zinc-900 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-200 dark:focus:border-zinc-400 dark:focus:ring-zinc-400";

export function SessionFilters({
  values,
  states,
  projects,
  workflows,
  pageSizes,
  defaultPageSize,
}: {
  values: FilterValues;
  states: string[];
  projects: Array<{ id: string; name: string }>;
  workflows: string[];
  pageSizes: readonly number[];
  defaultPageSize: number;
}) {
  const form = useRef<HTMLFormElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const submit = () => form.current?.requestSubmit();

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (e.key !== "/" || e.metaKey || e.ctrlKey || e.altKey) return;
      if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
      if (!singleKeyShortcutsOn()) return;
      e.preventDefault();
      search.current?.focus();
      search.current?.select();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  const anyFilter = Boolean(values.q || values.state || values.project || values.workflow || values.mine);
  return (
    <Form
      ref={form}
      action="/"
      className="flex flex-wrap items-center gap-2 border-b border-zinc-200 px-4 py-2.5 dark:border-zinc-800"
      role="search"
    >
      <div className="relative min-w-48 flex-1">
        <svg
          viewBox="0 0 20 20"
          className="pointer-events-none absolute top-1/2 left-2 size-3.5 -translate-y-1/2 fill-zinc-400"
          aria-hidden
        >
          <path d="M8.5 3a5.5 5.5 0 0 1 4.38 8.83l3.65 3.64a.75.75 0 1 1-1.06 1.06l-3.64-3.65A5.5 5.5 0 1 1 8.5 3Zm0 1.5a4 4 0 1 0 0 8 4 4 0 0 0 0-8Z" />
        </svg>
        <input
          ref={search}
          name="q"
          type="search"
          defaultValue={values.q ?? ""}
          placeholder="Search titles and prompts"
          aria-label="Search titles and prompts"
          className={`${CONTROL} w-full pr-8 pl-7`}
        />
        <kbd className="pointer-events-none absolute top-1/2 right-2 -translate-y-1/2 rounded border border-zinc-200 px-1 font-mono text-xs text-zinc-500 dark:text-zinc-400 dark:border-zinc-700">
          /
        </kbd>
      </div>
      <select name="state" defaultValue={values.state ?? ""} onChange={submit} aria-label="State" className={`${CONTROL} max-w-40`}>
        <option value="">All states</option>
        {states.map((s) => (
          <option key={s} value={s} title={s}>
            {stateLabel(s)}
          </option>
        ))}
      </select>
      <select name="project" defaultValue={values.project ?? ""} onChange={submit} aria-label="Project" className={`${CONTROL} max-w-40`}>
        <option value="">All projects</option>
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.id === p.name ? p.id : `${p.id} · ${p.name}`}
          </option>
        ))}
      </select>
      <select
        name="workflow"
        defaultValue={values.workflow ?? ""}
        onChange={submit}
        aria-label="Workflow"
        className={`${CONTROL} max-w-36`}
      >
        <option value="">All workflows</option>
        {workflows.map((w) => (
          <option key={w} value={w}>
            {w}
          </option>
        ))}
      </select>
      <label className={`${CONTROL} flex cursor-pointer items-center gap-1.5 select-none`}>
        <input
          type="checkbox"
          name="mine"
          value="1"
          defaultChecked={values.mine}
          onChange={submit}
          className="size-3.5 accent-zinc-900 dark:accent-zinc-100"
        />
        Mine
      </label>
      {values.limit !== defaultPageSize ? <input type="hidden" name="limit" value={values.limit} /> : null}
      <button type="submit" className={`${CONTROL} font-medium hover:bg-zinc-50 dark:hover:bg-zinc-900`}>
        Apply
      </button>
      {anyFilter ? (
        <a href="/" className="px-1 text-xs text-zinc-500 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100">
          Clear
        </a>
      ) : null}
      <span className="sr-only">Page sizes: {pageSizes.join(", ")}</span>
    </Form>
  );
}
