"use client";
// Starts a conversation: the project whose agents take part, the collaboration mode with its
// config (a valid example per mode to start from), and a first message. Errors name their
// field; on success the conversation opens.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Panel } from "@/components/panel";
import { modeConfigExample } from "@/lib/mode-examples";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";

const field =
  "w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm text-zinc-900 shadow-sm outline-none focus:border-sky-600 focus:ring-2 focus:ring-sky-600/20 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100";
const label = "mb-1 block text-xs font-semibold tracking-wide text-zinc-700 uppercase dark:text-zinc-300";

export function StartConversationForm({
  projects,
  modes,
}: {
  projects: Array<{ id: string; name: string }>;
  modes: Array<{ name: string; description: string }>;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const [projectId, setProjectId] = useState(projects[0]?.id ?? "");
  const agents = useQuery(trpc.conversations.agents.queryOptions({ projectId }, { enabled: !!projectId }));
  const agentIds = agents.data?.map((a) => a.id) ?? [];
  const [mode, setMode] = useState("free_discussion");
  const [config, setConfig] = useState(JSON.stringify(modeConfigExample("free_discussion", agentIds), null, 2));
  const [message, setMessage] = useState("");
  const [parseError, setParseError] = useState<string | null>(null);
  const start = useMutation(trpc.conversations.start.mutationOptions({ onSuccess: (r) => router.push(`/conversations/${r.sessionId}`) }));
  const errors = trpcFieldErrors(start.error);
  const shown = [...(parseError ? [parseError] : []), ...(errors.modeConfig ?? [])];

  return (
    <Panel title="New conversation">
      <form
        className="space-y-4 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          let modeConfig: unknown;
          try {
            modeConfig = config.trim() ? JSON.parse(config) : {};
          } catch (err) {
            setParseError(`the config is not valid JSON: ${(err as Error).message}`);
            return;
          }
          setParseError(null);
          start.mutate({ projectId, mode, modeConfig, ...(message.trim() ? { message } : {}) });
        }}
      >
        <div className="grid gap-4 sm:grid-cols-2">
          <div>
            <label className={label} htmlFor="conversation-project">
              Project
            </label>
            <select id="conversation-project" className={field} value={projectId} onChange={(e) => setProjectId(e.target.value)}>
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
            <label className={label} htmlFor="conversation-mode">
              Mode
            </label>
            <select
              id="conversation-mode"
              className={field}
              value={mode}
              onChange={(e) => {
                setMode(e.target.value);
                setConfig(JSON.stringify(modeConfigExample(e.target.value, agentIds), null, 2));
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
        <div>
          <label className={label} htmlFor="conversation-config">
            Mode config (JSON)
          </label>
          <textarea
            id="conversation-config"
            className={`${field} min-h-28 font-mono text-xs`}
            value={config}
            onChange={(e) => setConfig(e.target.value)}
          />
          {shown.map((m) => (
            <p key={m} role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-300">
              {m}
            </p>
          ))}
        </div>
        <div>
          <label className={label} htmlFor="conversation-message">
            First message (optional)
          </label>
          <textarea
            id="conversation-message"
            className={`${field} min-h-20`}
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
            className="rounded-md bg-emerald-700 px-4 py-2 text-sm font-medium text-white shadow-sm hover:bg-emerald-600 disabled:opacity-60"
          >
            {start.isPending ? "Starting…" : "Start conversation"}
          </button>
        </div>
      </form>
    </Panel>
  );
}
