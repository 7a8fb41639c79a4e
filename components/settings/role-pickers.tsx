"use client";
// A project's roles, one picker each (req X2, docs/configuration.md "Roles"): an agent CLI the
// live runners detected, a brain (provider, model, endpoint, the variable holding its key from
// the admin's list), a command (argv), simulated, or unbound. Check asks the server to judge
// the agent as a save would and to check it (the brain's endpoint, the CLI on the runners, the
// command's rules); Save binds it (a ConfigChanged event, in the project's history). Each
// answer is shown in place.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { agentForChoice, argvFromText, argvToText, choiceOf, PROVIDERS, SHELLS, type RoleChoice } from "@/lib/role-agents";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import type { ProjectRoles, RoleCheck } from "@/server/projects/roles";
import { SETTINGS_FIELD_CLASS as input, SETTINGS_LABEL_CLASS as label, SETTINGS_BUTTON_CLASS as button } from "@/components/form-classes";

type Kind = RoleChoice["kind"] | "none";
const KIND_LABELS: Record<Kind, string> = {
  none: "unbound",
  shell: "CLI shell (on the runners)",
  brain: "Brain (HTTP model)",
  command: "Command agent",
  simulated: "Simulated (scripted)",
};

interface Draft {
  kind: Kind;
  shell: (typeof SHELLS)[number];
  shellModel: string;
  provider: (typeof PROVIDERS)[number];
  model: string;
  baseUrl: string;
  apiKeyEnv: string;
  argv: string;
  prompt: "stdin" | "arg";
}

function draftOf(record: Record<string, unknown> | null): Draft {
  const choice = choiceOf(record);
  const base: Draft = {
    kind: "none",
    shell: "claude",
    shellModel: "",
    provider: "openai",
    model: "",
    baseUrl: "",
    apiKeyEnv: "",
    argv: "",
    prompt: "stdin",
  };
  if (!choice) return base;
  switch (choice.kind) {
    case "shell":
      return { ...base, kind: "shell", shell: choice.shell, shellModel: choice.model ?? "" };
    case "brain":
      return {
        ...base,
        kind: "brain",
        provider: choice.provider,
        model: choice.model,
        baseUrl: choice.baseUrl ?? "",
        apiKeyEnv: choice.apiKeyEnv ?? "",
      };
    case "command":
      return { ...base, kind: "command", argv: argvToText(choice.argv), prompt: choice.prompt ?? "stdin" };
    case "simulated":
      return { ...base, kind: "simulated" };
  }
}

function choiceFrom(d: Draft): RoleChoice | null {
  switch (d.kind) {
    case "none":
      return null;
    case "shell":
      return { kind: "shell", shell: d.shell, model: d.shellModel };
    case "brain":
      return { kind: "brain", provider: d.provider, model: d.model, baseUrl: d.baseUrl, apiKeyEnv: d.apiKeyEnv };
    case "command":
      return { kind: "command", argv: argvFromText(d.argv), prompt: d.prompt };
    case "simulated":
      return { kind: "simulated" };
  }
}

export function RolePickers({ data, canEdit }: { data: ProjectRoles; canEdit: boolean }) {
  return (
    <div className="divide-y divide-zinc-100 dark:divide-zinc-800">
      {data.roles.map((r) => (
        <RolePicker key={r.role} data={data} role={r} canEdit={canEdit} />
      ))}
    </div>
  );
}

function RolePicker({ data, role: r, canEdit }: { data: ProjectRoles; role: ProjectRoles["roles"][number]; canEdit: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [draft, setDraft] = useState(() => draftOf(r.record));
  const check = useMutation(trpc.settings.checkRole.mutationOptions());
  const save = useMutation(trpc.settings.configureProject.mutationOptions({ onSuccess: () => router.refresh() }));
  const fieldErrors = trpcFieldErrors(save.error);
  const saveError = fieldErrors[`agents.${r.role}`]?.join("; ") ?? (save.error ? save.error.message : null);
  const id = (f: string) => `role-${r.role}-${f}`;
  const set =
    <K extends keyof Draft>(key: K) =>
    (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
      setDraft((d) => ({ ...d, [key]: e.target.value as Draft[K] }));
      check.reset();
      save.reset();
    };
  const choice = choiceFrom(draft);
  const agent = choice ? (agentForChoice(r.role, choice) as Record<string, unknown>) : null;
  // Literal names from the admin's list are offered; a list with patterns takes any name it matches.
  const keyNames = data.agentEnv.filter((n) => !n.includes("*"));
  const keyPatterns = data.agentEnv.some((n) => n.includes("*"));

  return (
    <section aria-labelledby={id("title")} className="space-y-3 p-4" data-testid={`role-${r.role}`}>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h3 id={id("title")} className="font-mono text-sm font-semibold text-zinc-900 dark:text-zinc-100">
          {r.role}
        </h3>
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          {r.neededBy.length ? <>needed by {r.neededBy.join(", ")}</> : "no workflow needs it"}
          {" · "}
          {r.repository ? (
            <>
              played by <span className="font-mono">{r.repository.id}</span> of .catcafe/agents.json (it comes first)
            </>
          ) : r.record ? (
            <>
              bound: <span className="font-mono">{String(r.record.kind)}</span>
              {r.record.model ? <span className="font-mono"> {String(r.record.model)}</span> : null}
            </>
          ) : (
            <span className="font-medium text-amber-800 dark:text-amber-300">unbound</span>
          )}
        </p>
      </div>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-4">
        <div>
          <label className={label} htmlFor={id("kind")}>
            Agent
          </label>
          <select id={id("kind")} className={input} value={draft.kind} onChange={set("kind")} disabled={!canEdit}>
            {(Object.keys(KIND_LABELS) as Kind[]).map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
        </div>
        {draft.kind === "shell" ? (
          <>
            <div>
              <label className={label} htmlFor={id("shell")}>
                CLI
              </label>
              <select id={id("shell")} className={input} value={draft.shell} onChange={set("shell")} disabled={!canEdit}>
                {SHELLS.map((s) => {
                  const seen = data.shells.find((x) => x.shell === s)?.sightings ?? [];
                  const ok = seen.filter((x) => x.installed && x.supported);
                  return (
                    <option key={s} value={s}>
                      {s}
                      {seen.length
                        ? ok.length
                          ? ` — ${ok[0]!.version ?? "installed"} on ${ok.length} runner(s)`
                          : " — not usable on the runners"
                        : ""}
                    </option>
                  );
                })}
              </select>
            </div>
            <div>
              <label className={label} htmlFor={id("shell-model")}>
                Model <span className="font-normal text-zinc-500 dark:text-zinc-400">(optional)</span>
              </label>
              <input id={id("shell-model")} className={input} value={draft.shellModel} onChange={set("shellModel")} disabled={!canEdit} />
            </div>
          </>
        ) : null}
        {draft.kind === "brain" ? (
          <>
            <div>
              <label className={label} htmlFor={id("provider")}>
                Provider
              </label>
              <select id={id("provider")} className={input} value={draft.provider} onChange={set("provider")} disabled={!canEdit}>
                {PROVIDERS.map((p) => (
                  <option key={p} value={p}>
                    {p === "openai" ? "openai-compatible" : p}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label className={label} htmlFor={id("model")}>
                Model
              </label>
              <input
                id={id("model")}
                className={input}
                value={draft.model}
                onChange={set("model")}
                placeholder={draft.provider === "openai" ? "gpt-5" : "claude-sonnet-4-5"}
                disabled={!canEdit}
              />
            </div>
            <div>
              <label className={label} htmlFor={id("base-url")}>
                Base URL <span className="font-normal text-zinc-500 dark:text-zinc-400">(default: the provider&apos;s)</span>
              </label>
              <input
                id={id("base-url")}
                className={input}
                value={draft.baseUrl}
                onChange={set("baseUrl")}
                placeholder={draft.provider === "openai" ? "https://api.openai.com/v1" : "https://api.anthropic.com"}
                disabled={!canEdit}
              />
            </div>
            <div className="sm:col-span-2 lg:col-span-4">
              <label className={label} htmlFor={id("key-env")}>
                Key variable{" "}
                <span className="font-normal text-zinc-500 dark:text-zinc-400">
                  (from the admin&apos;s list access.agentEnv: {data.agentEnv.join(", ") || "empty"})
                </span>
              </label>
              {keyPatterns ? (
                <input id={id("key-env")} className={input} value={draft.apiKeyEnv} onChange={set("apiKeyEnv")} disabled={!canEdit} />
              ) : (
                <select id={id("key-env")} className={input} value={draft.apiKeyEnv} onChange={set("apiKeyEnv")} disabled={!canEdit}>
                  <option value="">(no key)</option>
                  {keyNames.map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
              )}
            </div>
          </>
        ) : null}
        {draft.kind === "command" ? (
          <>
            <div className="sm:col-span-2">
              <label className={label} htmlFor={id("argv")}>
                Command <span className="font-normal text-zinc-500 dark:text-zinc-400">(run without a shell, sandboxed)</span>
              </label>
              <input
                id={id("argv")}
                className={`${input} font-mono`}
                value={draft.argv}
                onChange={set("argv")}
                placeholder="node tools/agent.mjs"
                disabled={!canEdit}
              />
            </div>
            <div>
              <label className={label} htmlFor={id("prompt")}>
                Prompt on
              </label>
              <select id={id("prompt")} className={input} value={draft.prompt} onChange={set("prompt")} disabled={!canEdit}>
                <option value="stdin">standard input</option>
                <option value="arg">the {"{prompt}"} argument</option>
              </select>
            </div>
          </>
        ) : null}
      </div>
      {canEdit ? (
        <div className="flex flex-wrap items-center gap-2">
          <button
            type="button"
            className={`${button} bg-zinc-900 text-white hover:bg-zinc-800 dark:bg-zinc-100 dark:text-zinc-900`}
            disabled={!agent || check.isPending}
            onClick={() => agent && check.mutate({ projectId: data.projectId, role: r.role, agent })}
          >
            {check.isPending ? "Checking…" : `Check ${r.role}`}
          </button>
          <button
            type="button"
            className={`${button} bg-sky-700 text-white hover:bg-sky-800`}
            disabled={save.isPending || (draft.kind === "none" && !r.record)}
            onClick={() => save.mutate({ projectId: data.projectId, agents: { [r.role]: agent } })}
          >
            {save.isPending ? "Saving…" : draft.kind === "none" ? `Unbind ${r.role}` : `Save ${r.role}`}
          </button>
          <span role="status" className="text-xs text-emerald-800 dark:text-emerald-300">
            {save.isSuccess ? (save.data.changes.length ? `Saved (change #${save.data.version}).` : "Nothing changed.") : null}
          </span>
        </div>
      ) : null}
      {saveError ? (
        <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
          {saveError}
        </p>
      ) : null}
      {check.error ? (
        <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
          {check.error.message}
        </p>
      ) : null}
      {check.data ? <CheckResult check={check.data} /> : null}
    </section>
  );
}

function CheckResult({ check }: { check: RoleCheck }) {
  const tone = check.ok
    ? "border-emerald-200 bg-emerald-50 text-emerald-900 dark:border-emerald-900/60 dark:bg-emerald-950/30 dark:text-emerald-200"
    : "border-rose-200 bg-rose-50 text-rose-900 dark:border-rose-900/60 dark:bg-rose-950/30 dark:text-rose-200";
  return (
    <div className={`rounded-md border p-2 text-xs ${tone}`} data-testid="role-check-result" role="status">
      <p className="font-medium">
        {check.ok ? "✓" : "✗"} {check.message}
      </p>
      {"brain" in check ? (
        <ul className="mt-1 space-y-0.5 font-mono">
          <li>endpoint: {check.brain.connectivity}</li>
          <li>key: {check.brain.auth}</li>
          <li>model: {check.brain.modelExists === null ? "unknown" : check.brain.modelExists ? "exists" : "not found"}</li>
          {check.brain.latencyMs !== null ? <li>latency: {check.brain.latencyMs} ms</li> : null}
        </ul>
      ) : null}
      {"shells" in check ? (
        <ul className="mt-1 space-y-0.5">
          {check.shells.map((s) => (
            <li key={s.where}>
              <span className="font-mono">{s.where}</span>: {s.installed ? `installed ${s.version ?? ""}` : "not installed"}
              {s.installed ? (s.supported ? ", supported" : `, not supported (${s.problems.join("; ")})`) : ""}; key from{" "}
              <span className="font-mono">{check.keyEnv}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
