// `/settings/shells`: the agent CLIs (claude, codex, gemini) as detected on the web
// server's machine — path, version against the supported range, the capabilities their
// adapter needs — and the shells each repository's `.catcafe/shells.json` configures.
import type { Metadata } from "next";
import { EmptyState, Panel } from "@/components/panel";
import { Chips, YesNo } from "@/components/settings/argv";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import { formatTimestamp } from "@/lib/format-time";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Shells · Settings" };

export default async function ShellsSettingsPage() {
  const path = "/settings/shells";
  const read = await readPage(path, path, ({ caller }) => caller.settings.shells());
  // A role that may not read the section sees why (FORBIDDEN), inside the settings frame.
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const data = read.ok ? read.data : null;
  const forbidden = !read.ok;
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="shells"
        title="Shells"
        description="Coding-agent CLIs that run a prompt in a workspace. Detected here on the web server; each runner machine detects its own when it runs them."
      >
        {forbidden ? <NeedsRole role="operator" what="Shell detection" /> : null}
        {data ? (
          <>
            <Panel
              title="Detected on this machine"
              meta={data.detectedAt ? `as of ${formatTimestamp(new Date(data.detectedAt))}` : undefined}
            >
              {data.unavailable || !data.detected ? (
                <EmptyState title="Shell detection is not available" hint={data.unavailable ?? "The detection module did not answer."} />
              ) : (
                <div className="overflow-x-auto">
                  <table className="w-full min-w-[760px] text-left text-xs" data-testid="detected-shells">
                    <thead>
                      <tr className="border-b border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
                        <th className="px-4 py-2 font-medium">CLI</th>
                        <th className="px-3 py-2 font-medium">Executable</th>
                        <th className="px-3 py-2 font-medium">Version</th>
                        <th className="px-3 py-2 font-medium">Headless</th>
                        <th className="px-3 py-2 font-medium">Edits files</th>
                        <th className="px-3 py-2 font-medium">Working dir</th>
                        <th className="px-4 py-2 font-medium">Status</th>
                      </tr>
                    </thead>
                    <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
                      {data.detected.map((s) => (
                        <tr key={s.shell} className="align-top">
                          <td className="px-4 py-2 font-mono font-semibold">{s.shell}</td>
                          <td className="max-w-72 px-3 py-2 font-mono text-xs break-all text-zinc-600 dark:text-zinc-300">
                            {s.path ?? <span className="text-zinc-500 dark:text-zinc-400">not found</span>}
                          </td>
                          <td className="px-3 py-2 font-mono">
                            {s.version ?? "—"}
                            <div className="text-xs text-zinc-500 dark:text-zinc-400">needs {s.requiredRange}</div>
                          </td>
                          <td className="px-3 py-2">
                            <YesNo value={s.capabilities.nonInteractive} />
                          </td>
                          <td className="px-3 py-2">
                            <YesNo value={s.capabilities.editFiles} />
                          </td>
                          <td className="px-3 py-2">
                            <YesNo value={s.capabilities.workingDirectory} />
                          </td>
                          <td className="px-4 py-2">
                            <span
                              className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${s.supported ? "bg-emerald-500/10 text-emerald-700 ring-emerald-600/25 dark:text-emerald-300" : "bg-amber-500/10 text-amber-800 ring-amber-600/25 dark:text-amber-300"}`}
                            >
                              {s.supported ? "supported" : s.path ? "not supported" : "missing"}
                            </span>
                            {s.problems.length ? (
                              <ul className="mt-1 space-y-0.5 text-xs text-zinc-500 dark:text-zinc-400">
                                {s.problems.map((p, i) => (
                                  <li key={i}>{p}</li>
                                ))}
                              </ul>
                            ) : null}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </Panel>
            <Panel title="Configured in repositories" meta=".catcafe/shells.json">
              {data.configured.length === 0 ? (
                <EmptyState
                  title="No configured shells"
                  hint="Repositories without a shells.json use the detected CLIs by name (claude, codex, gemini)."
                />
              ) : (
                <table className="w-full text-left text-xs">
                  <thead>
                    <tr className="border-b border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
                      <th className="px-4 py-2 font-medium">Project</th>
                      <th className="px-3 py-2 font-medium">Shell</th>
                      <th className="px-3 py-2 font-medium">Kind</th>
                      <th className="px-3 py-2 font-medium">Command</th>
                      <th className="px-4 py-2 font-medium">Capabilities</th>
                    </tr>
                  </thead>
                  <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
                    {data.configured.map((s) => (
                      <tr key={`${s.projectId}-${s.id}`}>
                        <td className="px-4 py-2 font-mono">{s.projectId}</td>
                        <td className="px-3 py-2 font-mono font-medium">
                          {s.id}
                          {s.builtin ? <span className="ml-1 text-xs text-zinc-500 dark:text-zinc-400">built in</span> : null}
                        </td>
                        <td className="px-3 py-2 font-mono">{s.kind}</td>
                        <td className="px-3 py-2 font-mono text-xs">{s.command}</td>
                        <td className="px-4 py-2">
                          <Chips items={s.capabilities} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </Panel>
          </>
        ) : null}
      </SettingsFrame>
    </PageShell>
  );
}
