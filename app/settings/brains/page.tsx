// `/settings/brains`: the models agents call — from project records and `.catcafe/brains.json`
// — with provider, model, endpoint, the NAME of the key's variable (never the key), the rate
// limit and capabilities, and a Check button (operators and admins).
import type { Metadata } from "next";
import { EmptyState, Panel } from "@/components/panel";
import { Chips, YesNo } from "@/components/settings/argv";
import { BrainCheck } from "@/components/settings/brain-check";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";
import { checkBrainAction } from "./actions";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Brains · Settings" };

export default async function BrainsSettingsPage() {
  const path = "/settings/brains";
  const read = await readPage(path, path, ({ caller }) => caller.settings.brains());
  // A role that may not read the section sees why (FORBIDDEN), inside the settings frame.
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const brains = read.ok ? read.data : null;
  const forbidden = !read.ok;
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="brains"
        title="Brains"
        description="Models agents call over HTTP (OpenAI-compatible, Anthropic) or the scripted stand-in. Check tests the endpoint, the key, the model name and the rate limit with one cheap request."
      >
        {forbidden ? <NeedsRole role="operator" what="Brain configuration" /> : null}
        {brains ? (
          <Panel title="Brains" meta={`${brains.length} configured`}>
            {brains.length === 0 ? (
              <EmptyState
                title="No brains"
                hint="Agents that are CLIs bring their own model; HTTP brains appear here once a project or its .catcafe/brains.json names one."
              />
            ) : (
              <div className="overflow-x-auto">
                <table className="w-full min-w-[900px] text-left text-xs" data-testid="brains">
                  <thead>
                    <tr className="border-b border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
                      <th className="px-4 py-2 font-medium">Brain</th>
                      <th className="px-3 py-2 font-medium">Provider · model</th>
                      <th className="px-3 py-2 font-medium">Endpoint</th>
                      <th className="px-3 py-2 font-medium">API key</th>
                      <th className="px-3 py-2 font-medium">Rate limit</th>
                      <th className="px-3 py-2 font-medium">Used by</th>
                      <th className="px-4 py-2 font-medium">Check</th>
                    </tr>
                  </thead>
                  <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
                    {brains.map((b) => (
                      <tr key={`${b.projectId}-${b.source}-${b.id}`} className="align-top">
                        <td className="px-4 py-2">
                          <div className="font-mono font-semibold">{b.id}</div>
                          <div className="text-xs text-zinc-500 dark:text-zinc-400">
                            {b.projectId} · {b.source === "config" ? ".catcafe/brains.json" : "project record"}
                          </div>
                        </td>
                        <td className="px-3 py-2">
                          <div className="font-mono">{b.provider}</div>
                          <div className="font-mono text-xs text-zinc-500 dark:text-zinc-400">{b.model}</div>
                          {b.capabilities.length ? (
                            <div className="mt-1">
                              <Chips items={b.capabilities} />
                            </div>
                          ) : null}
                        </td>
                        <td className="max-w-56 px-3 py-2 font-mono text-xs break-all text-zinc-600 dark:text-zinc-300">
                          {b.baseUrl ?? (b.simulated ? "— (scripted)" : "provider default")}
                        </td>
                        <td className="px-3 py-2">
                          {b.apiKeyEnv ? (
                            <>
                              <div className="font-mono">${b.apiKeyEnv}</div>
                              <YesNo value={Boolean(b.keySet)} yes="set on web server" no="not set here" />
                            </>
                          ) : (
                            <span className="text-zinc-500 dark:text-zinc-400">{b.simulated ? "none needed" : "none"}</span>
                          )}
                        </td>
                        <td className="px-3 py-2 font-mono text-xs">
                          {b.minIntervalMs === null ? "—" : b.minIntervalMs === 0 ? "off" : `1 call / ${b.minIntervalMs} ms`}
                        </td>
                        <td className="px-3 py-2 font-mono text-xs text-zinc-600 dark:text-zinc-300">{b.usedBy.join(", ") || "—"}</td>
                        <td className="px-4 py-2">
                          <BrainCheck
                            check={checkBrainAction.bind(null, { projectId: b.projectId, source: b.source, brainId: b.id })}
                            disabledReason={b.checkable ? null : "simulated: nothing to check"}
                          />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Panel>
        ) : null}
      </SettingsFrame>
    </PageShell>
  );
}
