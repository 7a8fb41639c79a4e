"use client";
// Starts a conversation: the project whose agents take part, the collaboration mode with its
// config (a valid example per mode to start from), and a first message. Errors name their
// field; on success the conversation opens.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import { Panel } from "@/components/panel";
import { modeConfigExample } from "@/lib/mode-examples";
import { simulatedWarning } from "@/lib/simulated";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import { ModeConfigField, useModeConfig } from "./mode-config";

export function StartConversationForm({
  projects,
  modes,
}: {
  projects: Array<{ id: string; name: string; simulated?: boolean }>;
  modes: Array<{ name: string; description: string }>;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const [projectId, setProjectId] = useState(projects[0]?.id ?? "");
  const agents = useQuery(trpc.conversations.agents.queryOptions({ projectId }, { enabled: !!projectId }));
  const agentIds = agents.data?.map((a) => a.id) ?? [];
  const [mode, setMode] = useState("free_discussion");
  const config = useModeConfig(modeConfigExample("free_discussion", agentIds));
  const [message, setMessage] = useState("");
  const start = useMutation(trpc.conversations.start.mutationOptions({ onSuccess: (r) => router.push(`/conversations/${r.sessionId}`) }));
  const errors = trpcFieldErrors(start.error);

  return (
    <Panel title="New conversation">
      <form
        className="space-y-4 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          const parsed = config.read();
          if (parsed) start.mutate({ projectId, mode, modeConfig: parsed.value, ...(message.trim() ? { message } : {}) });
        }}
      >
        <div className="grid gap-4 sm:grid-cols-2">
          <div>
            <label className={LABEL_CLASS} htmlFor="conversation-project">
              Project
            </label>
            <select id="conversation-project" className={FIELD_CLASS} value={projectId} onChange={(e) => setProjectId(e.target.value)}>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
            <p className="mt-1 text-xs text-zinc-700 dark:text-zinc-300">
              Agents: {agents.isPending ? "…" : agents.error ? agents.error.message : agentIds.map((a) => `@${a}`).join(", ") || "none"}
            </p>
          </div>
          <div>
            <label className={LABEL_CLASS} htmlFor="conversation-mode">
              Mode
            </label>
            <select
              id="conversation-mode"
              className={FIELD_CLASS}
              value={mode}
              onChange={(e) => {
                setMode(e.target.value);
                config.set(modeConfigExample(e.target.value, agentIds));
              }}
            >
              {modes.map((m) => (
                <option key={m.name} value={m.name}>
                  {m.name}
                </option>
              ))}
            </select>
            <p className="mt-1 text-xs text-zinc-700 dark:text-zinc-300">{modes.find((m) => m.name === mode)?.description}</p>
          </div>
        </div>
        {projects.find((p) => p.id === projectId)?.simulated ? (
          <p
            data-testid="simulated-note"
            data-workflow="conversation"
            className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/30 dark:text-amber-200"
          >
            This project&apos;s agents are <strong>simulated</strong>: canned replies from a script, not an AI model, no network.{" "}
            {simulatedWarning("conversation", projectId)}
          </p>
        ) : null}
        <ModeConfigField id="conversation-config" label="Mode config (JSON)" config={config} serverErrors={errors.modeConfig} />
        <div>
          <label className={LABEL_CLASS} htmlFor="conversation-message">
            First message (optional)
          </label>
          <textarea
            id="conversation-message"
            className={`${FIELD_CLASS} min-h-20`}
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            placeholder={agentIds[0] ? `@${agentIds[0]} what do you think about …?` : ""}
          />
          {errors.text?.map((m) => (
            <p key={m} role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-300">
              {m}
            </p>
          ))}
        </div>
        {start.error && !Object.keys(errors).length ? (
          <p role="alert" className="text-sm text-rose-700 dark:text-rose-300">
            {start.error.message}
          </p>
        ) : null}
        <div className="flex justify-end">
          <button
            type="submit"
            disabled={start.isPending || !projectId}
            className="rounded-md bg-emerald-700 px-4 py-2 text-sm font-medium text-white shadow-sm hover:bg-emerald-800 disabled:opacity-60"
          >
            {start.isPending ? "Starting…" : "Start conversation"}
          </button>
        </div>
      </form>
    </Panel>
  );
}
