"use client";
// The conversation's mode: what it is and, for operators, a switch to another with its config
// (JSON, checked by the server: an error names the field). A switch is refused while calls
// are in flight, so the button waits for them.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { modeConfigExample, parseModeConfig } from "@/lib/mode-examples";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import { Panel } from "@/components/panel";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import type { ConversationData } from "./conversation-view";

export function ModePicker({ view, canOperate }: { view: ConversationData; canOperate: boolean }) {
  const trpc = useTRPC();
  const modes = useQuery(trpc.modes.list.queryOptions());
  const agentIds = view.agents.map((a) => a.id);
  const [mode, setMode] = useState(view.mode);
  const [config, setConfig] = useState(JSON.stringify(view.modeConfig, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const switchMode = useMutation(trpc.conversations.setMode.mutationOptions());
  const errors = trpcFieldErrors(switchMode.error);
  const busy = view.inFlight.length > 0;

  return (
    <Panel title="Mode">
      <form
        className="space-y-3 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          const parsed = parseModeConfig(config);
          setParseError("error" in parsed ? parsed.error : null);
          if ("error" in parsed) return;
          const modeConfig = parsed.value;
          switchMode.mutate({ sessionId: view.id, mode, modeConfig });
        }}
      >
        <div>
          <label className={LABEL_CLASS} htmlFor="mode">
            Collaboration mode
          </label>
          <select
            id="mode"
            className={FIELD_CLASS}
            value={mode}
            disabled={!canOperate}
            onChange={(e) => {
              setMode(e.target.value);
              setConfig(
                JSON.stringify(e.target.value === view.mode ? view.modeConfig : modeConfigExample(e.target.value, agentIds), null, 2),
              );
            }}
          >
            {(modes.data ?? [{ name: view.mode, description: view.modeDescription }]).map((m) => (
              <option key={m.name} value={m.name}>
                {m.name}
              </option>
            ))}
          </select>
          <p className="mt-1 text-xs text-zinc-700 dark:text-zinc-300">{modes.data?.find((m) => m.name === mode)?.description}</p>
          {errors.mode?.map((m) => (
            <p key={m} role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-300">
              {m}
            </p>
          ))}
        </div>
        <div>
          <label className={LABEL_CLASS} htmlFor="mode-config">
            Config (JSON)
          </label>
          <textarea
            id="mode-config"
            className={`${FIELD_CLASS} min-h-32 font-mono text-xs`}
            value={config}
            readOnly={!canOperate}
            onChange={(e) => setConfig(e.target.value)}
          />
          {[...(parseError ? [parseError] : []), ...(errors.modeConfig ?? [])].map((m) => (
            <p key={m} role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-300">
              {m}
            </p>
          ))}
          {switchMode.error && !Object.keys(errors).length ? (
            <p role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-300">
              {switchMode.error.message}
            </p>
          ) : null}
        </div>
        {canOperate ? (
          <div className="flex flex-wrap items-center justify-end gap-2">
            {busy ? <span className="text-xs text-zinc-700 dark:text-zinc-300">Waiting for the calls in flight…</span> : null}
            <button
              type="submit"
              disabled={busy || switchMode.isPending}
              className="rounded-md bg-sky-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-sky-600 disabled:opacity-60"
            >
              Switch mode
            </button>
          </div>
        ) : null}
      </form>
    </Panel>
  );
}
