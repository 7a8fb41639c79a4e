// `/settings/projects`: each project's repository, iteration cap, command allowlist (and
// what `.catcafe/projects.json` narrows it to), its agents in brief, and whether its
// `.catcafe/` configuration loads at HEAD.
import type { Metadata } from "next";
import { Kbd, Panel } from "@/components/panel";
import { ArgvPattern } from "@/components/settings/argv";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import { AddProjectForm } from "@/components/settings/add-project";
import { ConfigForm, ConfigHistory, type HistoryRow } from "@/components/settings/config-form";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import type { ProjectOverview } from "@/server/projects/overview";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Projects · Settings" };

export default async function ProjectsSettingsPage() {
  const path = "/settings/projects";
  const read = await readPage(path, path, async ({ caller }) => ({
    projects: await caller.settings.projects(),
    server: await caller.settings.effective({}),
    serverHistory: await caller.settings.history({}),
  }));
  // A role that may not read the section sees why (FORBIDDEN), inside the settings frame.
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const projects = read.ok ? read.data.projects : null;
  const forbidden = !read.ok;
  const canEdit = read.user ? hasRole(read.user.role, "admin") : false;
  // Operators add projects and wire their roles and delivery (docs/auth.md); the rest is an admin's.
  const canAdd = read.user ? hasRole(read.user.role, "operator") : false;
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="projects"
        title="Projects"
        description="Repositories agents work on, how far a task may iterate, and the only commands tests may run."
      >
        {forbidden ? <NeedsRole role="operator" what="Project configuration" /> : null}
        {projects?.length === 0 ? (
          <Panel title="No projects">
            <p className="p-4 text-sm text-zinc-600 dark:text-zinc-400">
              No project yet. {canAdd ? "Add your first one below" : "An operator adds one here"} (or with{" "}
              <code className="font-mono">catcafe projects add</code>); with the demo on, <code className="font-mono">npm start</code>{" "}
              registers a demo project.
            </p>
          </Panel>
        ) : null}
        {read.ok ? (
          <TRPCReactProvider>
            <Panel title="All projects" meta={<span className="normal-case">server settings</span>}>
              <div className="space-y-3 p-4">
                <p className="text-xs text-zinc-600 dark:text-zinc-400">
                  Overrides of <span className="font-mono">settings.json</span> for every project; a project&apos;s own settings come first.
                  Empty fields inherit.
                </p>
                <ConfigForm
                  scope="server"
                  settings={read.data.server.settings}
                  version={read.data.serverHistory[0]?.version ?? 0}
                  canEdit={canEdit}
                />
                <details>
                  <summary className="cursor-pointer text-xs text-zinc-600 dark:text-zinc-400">History</summary>
                  <ConfigHistory scope="server" entries={read.data.serverHistory} canEdit={canEdit} />
                </details>
              </div>
            </Panel>
            {projects?.map((p) => (
              <ProjectCard key={p.id} project={p} canEdit={canEdit} />
            ))}
            {canAdd ? (
              <Panel title="Add project">
                <AddProjectForm />
              </Panel>
            ) : null}
          </TRPCReactProvider>
        ) : null}
      </SettingsFrame>
    </PageShell>
  );
}

function ProjectCard({ project: p, canEdit }: { project: ProjectOverview & { history: HistoryRow[] }; canEdit: boolean }) {
  const roles = [...new Set(p.agents.map((a) => a.role))];
  return (
    <Panel
      title={p.id}
      meta={
        <span className="normal-case">
          {p.name} ·{" "}
          <a href={`/settings/projects/${p.id}`} className="text-sky-700 hover:underline dark:text-sky-400">
            Roles and delivery →
          </a>
        </span>
      }
    >
      <div className="grid grid-cols-1 gap-0 divide-y divide-zinc-100 lg:grid-cols-2 lg:divide-x lg:divide-y-0 dark:divide-zinc-800">
        <dl className="grid grid-cols-[8.5rem_minmax(0,1fr)] content-start gap-x-3 gap-y-2 p-4 text-xs">
          <dt className="text-zinc-500 dark:text-zinc-400">Repository</dt>
          <dd className="font-mono break-all text-zinc-800 dark:text-zinc-200">{p.repoPath}</dd>
          <dt className="text-zinc-500 dark:text-zinc-400">Iteration cap</dt>
          <dd className="font-mono">{p.maxIterations}</dd>
          <dt className="text-zinc-500 dark:text-zinc-400">Default workflow</dt>
          <dd className="font-mono">
            {p.defaultWorkflow ?? "review_loop"} <span className="text-zinc-500 dark:text-zinc-400">· {p.defaultMode ?? "proposal"}</span>
          </dd>
          <dt className="text-zinc-500 dark:text-zinc-400">Roles</dt>
          <dd>
            {roles.length ? (
              <a href="/settings/agents" className="font-mono text-sky-700 hover:underline dark:text-sky-400">
                {roles.join(", ")}
              </a>
            ) : (
              <span className="text-zinc-500 dark:text-zinc-400">no agents</span>
            )}
          </dd>
          <dt className="text-zinc-500 dark:text-zinc-400">.catcafe/</dt>
          <dd className="space-y-1">
            {p.config.unreadable ? (
              <span className="text-amber-700 dark:text-amber-400">not readable from the web server: {p.config.unreadable}</span>
            ) : !p.config.found ? (
              <span className="text-zinc-500 dark:text-zinc-400">
                none at <span className="font-mono">{p.config.commit?.slice(0, 10)}</span> (the project record applies)
              </span>
            ) : (
              <span>
                <span className="font-mono">v{p.config.configVersion ?? "?"}</span> at{" "}
                <span className="font-mono">{p.config.commit?.slice(0, 10)}</span>
                <span className="block font-mono text-xs text-zinc-500 dark:text-zinc-400">{p.config.files.join(", ")}</span>
              </span>
            )}
            {p.config.errors.length ? (
              <ul className="space-y-0.5 rounded border border-rose-200 bg-rose-50 p-2 font-mono text-xs text-rose-800 dark:border-rose-900/60 dark:bg-rose-950/30 dark:text-rose-300">
                {p.config.errors.map((e, i) => (
                  <li key={i}>{e}</li>
                ))}
              </ul>
            ) : null}
          </dd>
        </dl>
        <div className="p-4">
          <h3 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Command allowlist</h3>
          <p className="mt-0.5 text-xs text-zinc-500 dark:text-zinc-400">
            Tests run only commands matching a pattern, without a shell, in the session workspace. <Kbd>*</Kbd> is one argument, a trailing{" "}
            <Kbd>**</Kbd> any remaining ones.
          </p>
          <ul className="mt-2 space-y-1.5" data-testid="allowlist">
            {p.allowlist.length ? (
              p.allowlist.map((rule, i) => (
                <li key={i}>
                  <ArgvPattern argv={rule} />
                </li>
              ))
            ) : (
              <li className="text-xs text-zinc-500 dark:text-zinc-400">empty: no command may run</li>
            )}
          </ul>
          {p.effectiveAllowlist ? (
            <>
              <h4 className="mt-3 text-xs font-semibold tracking-wide text-zinc-500 uppercase dark:text-zinc-400">
                Narrowed by .catcafe/projects.json
              </h4>
              <ul className="mt-1.5 space-y-1.5">
                {p.effectiveAllowlist.map((rule, i) => (
                  <li key={i}>
                    <ArgvPattern argv={rule} />
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </div>
      </div>
      <section className="border-t border-zinc-100 p-4 dark:border-zinc-800" aria-label={`Settings of ${p.id}`}>
        <h3 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Settings in force</h3>
        <ConfigForm
          scope="project"
          projectId={p.id}
          settings={p.settings}
          maxIterations={{ value: p.recordMaxIterations, inForce: p.maxIterations, source: p.maxIterationsSource }}
          models={p.models}
          version={p.history[0]?.version ?? 0}
          webhook={p.webhook}
          canEdit={canEdit}
        />
        <details>
          <summary className="cursor-pointer text-xs text-zinc-600 dark:text-zinc-400">History ({p.history.length})</summary>
          <ConfigHistory scope="project" projectId={p.id} entries={p.history} canEdit={canEdit} />
        </details>
      </section>
    </Panel>
  );
}
