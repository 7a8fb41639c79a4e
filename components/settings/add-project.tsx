"use client";
// Settings → Projects, "Add project" (operators, req X2): a repository on the server, the commands its
// tests may run, an agent per role in one word (an agent CLI, an HTTP model, simulated, or
// none: the repository's .catcafe/agents.json plays it), and the iteration cap. Saved with
// projects.upsert (recorded in the project's history); then the repository's .catcafe/ is
// checked on the spot and its problems shown as the files' own messages.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { agentPreset, PRESET_KINDS } from "@/lib/agent-presets";
import type { AgentConfigInput } from "@/server/agents/config";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import { SETTINGS_FIELD_CLASS as input, SETTINGS_LABEL_CLASS as label } from "@/components/form-classes";

// Every role a built-in workflow needs (review_loop: coder, reviewer, tester; forge: planner too; planning: planner, executor).
const ROLES = ["coder", "reviewer", "tester", "planner", "executor"] as const;

export function AddProjectForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const [fields, setFields] = useState({ id: "", name: "", repoPath: "", allowlist: "npm test", maxIterations: "3" });
  const [agents, setAgents] = useState<Record<string, { kind: string; model: string }>>({
    coder: { kind: "claude", model: "" },
    reviewer: { kind: "claude", model: "" },
    tester: { kind: "claude", model: "" },
    planner: { kind: "claude", model: "" },
    executor: { kind: "claude", model: "" },
  });
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const check = useMutation(trpc.ops.validateConfig.mutationOptions());
  const save = useMutation(
    trpc.projects.upsert.mutationOptions({
      onSuccess: (p) => {
        check.mutate({ projectId: p.id });
        router.refresh();
      },
    }),
  );
  const serverErrors = trpcFieldErrors(save.error);
  const errorOf = (field: string) => localErrors[field] ?? serverErrors[field]?.join("; ");
  const set = (field: keyof typeof fields) => (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) =>
    setFields((f) => ({ ...f, [field]: e.target.value }));

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const problems: Record<string, string> = {};
    const built: Partial<Record<(typeof ROLES)[number], AgentConfigInput>> = {};
    for (const role of ROLES) {
      const choice = agents[role]!;
      if (choice.kind === "none") continue;
      const preset = agentPreset(role, choice.kind, choice.model);
      if ("problem" in preset) problems[`agents.${role}`] = preset.problem;
      else built[role] = preset.agent;
    }
    setLocalErrors(problems);
    if (Object.keys(problems).length) return;
    save.mutate({
      id: fields.id.trim(),
      name: fields.name.trim() || fields.id.trim(),
      repoPath: fields.repoPath.trim(),
      allowlist: fields.allowlist
        .split("\n")
        .map((l) => l.trim().split(/\s+/).filter(Boolean))
        .filter((r) => r.length > 0),
      agents: built,
      maxIterations: Number(fields.maxIterations),
    });
  };

  const field = (name: keyof typeof fields, text: string, hint: string, multiline = false) => {
    const error = errorOf(name);
    const common = {
      id: `add-project-${name}`,
      name,
      value: fields[name],
      onChange: set(name),
      "aria-invalid": error ? true : undefined,
      "aria-describedby": error ? `add-project-${name}-error` : undefined,
    };
    return (
      <div>
        <label className={label} htmlFor={common.id}>
          {text}
          <span className="block font-normal text-zinc-500 dark:text-zinc-400">{hint}</span>
        </label>
        {multiline ? <textarea {...common} rows={3} className={`${input} font-mono`} /> : <input {...common} className={input} />}
        {error ? (
          <p id={`add-project-${name}-error`} role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-400">
            {error}
          </p>
        ) : null}
      </div>
    );
  };

  return (
    <form onSubmit={submit} aria-label="Add project" className="space-y-4 p-4">
      <div className="grid gap-4 sm:grid-cols-2">
        {field("id", "Id", "lowercase letters, digits and '-'")}
        {field("name", "Name", "what people read (default: the id)")}
        {field("repoPath", "Repository", "a git repository, as a path on this server")}
        {field("maxIterations", "Iteration cap", "review and test loops before a session stops")}
      </div>
      {field(
        "allowlist",
        "Commands tests may run",
        "one per line, e.g. npm test or node --test ** (* one argument, a trailing ** the rest)",
        true,
      )}
      <fieldset className="space-y-2">
        <legend className={label}>Agents</legend>
        <p className="text-xs text-zinc-500 dark:text-zinc-400">
          An agent CLI on the runner, an HTTP model (its key from the runner&apos;s environment), simulated (canned replies), or none (the
          repository&apos;s .catcafe/agents.json plays the role).
        </p>
        {ROLES.map((role) => {
          const error = errorOf(`agents.${role}`);
          return (
            <div key={role} className="grid grid-cols-1 items-start gap-2 sm:grid-cols-[6rem_10rem_minmax(0,1fr)]">
              <label htmlFor={`add-project-${role}-kind`} className="pt-1 text-sm text-zinc-700 dark:text-zinc-300">
                {role}
              </label>
              <select
                id={`add-project-${role}-kind`}
                className={input}
                value={agents[role]!.kind}
                onChange={(e) => setAgents((a) => ({ ...a, [role]: { ...a[role]!, kind: e.target.value } }))}
              >
                {[...PRESET_KINDS, "none"].map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
              <div>
                <input
                  aria-label={`${role} model`}
                  className={input}
                  placeholder="model (optional for CLIs)"
                  value={agents[role]!.model}
                  onChange={(e) => setAgents((a) => ({ ...a, [role]: { ...a[role]!, model: e.target.value } }))}
                  aria-invalid={error ? true : undefined}
                />
                {error ? (
                  <p role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-400">
                    {error}
                  </p>
                ) : null}
              </div>
            </div>
          );
        })}
      </fieldset>
      <div className="flex flex-wrap items-center gap-3">
        <button
          type="submit"
          disabled={save.isPending}
          className="rounded-md bg-sky-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-sky-800 disabled:opacity-60"
        >
          {save.isPending ? "Adding…" : "Add project"}
        </button>
        {save.error && !Object.keys(serverErrors).length ? (
          <span role="alert" className="text-sm text-rose-700 dark:text-rose-400">
            {save.error.message}
          </span>
        ) : null}
        {save.isSuccess ? (
          <span role="status" className="text-sm text-emerald-700 dark:text-emerald-400" data-testid="add-project-done">
            Added {save.data.id}.{" "}
            {check.data
              ? !check.data.found
                ? "No .catcafe/ in the repository: the agents above play every role."
                : check.data.ok
                  ? ".catcafe/ loads without a problem."
                  : ".catcafe/ has problems (tasks are refused until they are fixed):"
              : "Checking .catcafe/…"}{" "}
            <a className="underline" href={`/settings/projects/${save.data.id}#roles`}>
              Roles and delivery →
            </a>
          </span>
        ) : null}
      </div>
      {check.data && !check.data.ok ? (
        <ul className="space-y-0.5 rounded border border-rose-200 bg-rose-50 p-2 font-mono text-xs text-rose-800 dark:border-rose-900/60 dark:bg-rose-950/30 dark:text-rose-300">
          {check.data.errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}
