"use client";
// The conversation's mode: what it is and, for operators, a switch to another with its config
// (JSON, checked by the server: an error names the field). A switch is refused while calls
// are in flight, so the button waits for them.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { modeConfigExample } from "@/lib/mode-examples";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import { Panel } from "@/components/panel";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import type { ConversationData } from "./conversation-view";
import { ModeConfigField, useModeConfig } from "./mode-config";

export function ModePicker({ view, canOperate }: { view: ConversationData; canOperate: boolean }) {
  const trpc = useTRPC();
  const modes = useQuery(trpc.modes.list.queryOptions());
  const agentIds = view.agents.map((a) => a.id);
  const [mode, setMode] = useState(view.mode);
  const config = useModeConfig(view.modeConfig);
  const switchMode = useMutation(trpc.conversations.setMode.mutationOptions());
  const errors = trpcFieldErrors(switchMode.error);
  const busy = view.inFlight.length > 0;

  return (
    <Panel title="Mode">
      <form
        className="space-y-3 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          const parsed = config.read();
          if (parsed) switchMode.mutate({ sessionId: view.id, mode, modeConfig: parsed.value });
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
              config.set(e.target.value === view.mode ? view.modeConfig : modeConfigExample(e.target.value, agentIds));
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
          <ModeConfigField
            id="mode-config"
            label="Config (JSON)"
            config={config}
            serverErrors={errors.modeConfig}
            readOnly={!canOperate}
            minHeight="min-h-32"
          />
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
