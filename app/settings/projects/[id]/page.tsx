// `/settings/projects/<id>`: one project's agents per role and its delivery (req X2), edited by
// its team's operators: a picker per role (an agent CLI the runners detected, a brain, a
// command, simulated) with Check and Save, which workflows are ready, the delivery
// settings with Test, and its intake from the issue tracker (docs/intake.md). The access lists are an admin's (Settings → Projects).
import type { Metadata } from "next";
import { Panel } from "@/components/panel";
import { DeliveryForm } from "@/components/settings/delivery-form";
import { IntakeForm } from "@/components/settings/intake-form";
import { RolePickers } from "@/components/settings/role-pickers";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { readPage } from "../../../_lib/page-context";
import { PageShell, ReadFailure } from "../../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Project roles, delivery and intake · Settings" };

export default async function ProjectSetupPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const path = `/settings/projects/${encodeURIComponent(id)}`;
  const read = await readPage(path, path, async ({ caller }) => ({
    roles: await caller.settings.roles({ projectId: id }),
    effective: await caller.settings.effective({ projectId: id }),
    intake: await caller.intake.show({ projectId: id }),
  }));
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const canEdit = read.user ? hasRole(read.user.role, "operator") : false;
  const data = read.ok ? read.data : null;
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="projects"
        title={data ? `${data.roles.name} — roles, delivery and intake` : "Project"}
        description={
          <>
            Who plays each role of <span className="font-mono">{id}</span>, how its approved work is delivered, and which issues start its
            tasks. Each save is recorded in the project&apos;s history (
            <a className="underline" href="/settings/projects">
              Settings → Projects
            </a>
            ) and can be reverted.
          </>
        }
      >
        {!data ? <NeedsRole role="operator" what="A project's roles, delivery and intake" /> : null}
        {data ? (
          <TRPCReactProvider>
            <Panel title="Workflows">
              <ul className="space-y-1 p-4 text-sm" data-testid="readiness">
                {data.roles.readiness.map((w) => (
                  <li key={w.workflow} data-testid={`readiness-${w.workflow}`}>
                    <span className="font-mono">{w.workflow}</span>:{" "}
                    {w.ready ? (
                      <span className="text-emerald-800 dark:text-emerald-300">ready</span>
                    ) : (
                      <span className="text-amber-800 dark:text-amber-300">not ready — no agent plays {w.missing.join(", ")}</span>
                    )}
                  </li>
                ))}
              </ul>
            </Panel>
            <section id="roles" aria-label="Roles">
              <Panel title="Roles" meta={<span className="normal-case">agents per role</span>}>
                <RolePickers data={data.roles} canEdit={canEdit} />
              </Panel>
            </section>
            <section id="delivery" aria-label="Delivery">
              <Panel title="Delivery" meta={<span className="normal-case">docs/delivery.md</span>}>
                <DeliveryForm
                  projectId={id}
                  rows={data.effective.settings.filter((s) => s.field.startsWith("delivery"))}
                  tokenEnvAllowed={data.roles.deliveryTokenEnv}
                  canEdit={canEdit}
                />
              </Panel>
            </section>
            <section id="intake" aria-label="Intake">
              <Panel title="Intake from the issue tracker" meta={<span className="normal-case">docs/intake.md</span>}>
                <IntakeForm overview={data.intake} canEdit={canEdit} />
              </Panel>
            </section>
          </TRPCReactProvider>
        ) : null}
      </SettingsFrame>
    </PageShell>
  );
}
