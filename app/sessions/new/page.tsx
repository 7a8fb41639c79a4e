// `/sessions/new`: start a task (operator). The form posts to the tasks.start procedure and
// opens the new session; viewers are told they cannot start tasks. With no runner alive the
// form warns that the task would wait (it still starts: a runner may come).
import type { Metadata } from "next";
import { readPage } from "@/app/_lib/page-context";
import { PageShell, ReadFailure } from "@/app/_lib/page-shell";
import { NewTaskForm } from "@/components/new-task-form";
import { EmptyState, Panel } from "@/components/panel";
import { hasRole } from "@/lib/roles";
import { NEW_TASK_PATH } from "@/lib/nav";
import { TRPCReactProvider } from "@/lib/trpc/client";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New task" };

export default async function NewTaskPage() {
  const read = await readPage(NEW_TASK_PATH, NEW_TASK_PATH, async ({ caller, user }) => ({
    projects: await caller.projects.list(),
    // Operators get each project's own workflows too; a viewer sees no form.
    workflows: hasRole(user.role, "operator") ? await caller.projects.workflows() : [],
    // Which workflows each project's bound roles allow (req X2): Start is disabled, with the reason, for the others.
    readiness: hasRole(user.role, "operator") ? await caller.projects.readiness() : [],
    liveRunners: (await caller.runners.live()).runners.length,
  }));
  if (!read.ok)
    return (
      <PageShell user={read.user} path={NEW_TASK_PATH}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const {
    user,
    data: { projects, workflows, readiness, liveRunners },
  } = read;
  return (
    <PageShell user={user} path={NEW_TASK_PATH} liveRunners={liveRunners}>
      <div className="mx-auto max-w-3xl space-y-4">
        <div>
          <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-100">New task</h1>
          <p className="text-sm text-zinc-500 dark:text-zinc-400">
            Proposal mode holds a roundtable and waits for your confirm; implementation mode builds right away under the review and test
            gates.
          </p>
        </div>
        {!hasRole(user.role, "operator") ? (
          <Panel title="New task">
            <EmptyState title="Operators start tasks" hint={`You are signed in as a ${user.role}. Ask an admin for the operator role.`} />
          </Panel>
        ) : projects.length === 0 ? (
          <Panel title="New task">
            <EmptyState
              title="No project yet"
              hint={
                hasRole(user.role, "operator") ? (
                  <>
                    Add one in{" "}
                    <a className="underline" href="/settings/projects">
                      Settings → Projects
                    </a>{" "}
                    (or <code className="font-mono">catcafe projects add</code>): a repository, the commands its tests may run and an agent
                    per role.
                  </>
                ) : (
                  "An operator adds projects in Settings → Projects (or with `catcafe projects add`); ask one to add yours."
                )
              }
            />
          </Panel>
        ) : (
          <>
            {liveRunners === 0 ? (
              <p
                role="alert"
                data-testid="no-runner-warning"
                className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-900/70 dark:bg-amber-950/40 dark:text-amber-200"
              >
                No runner is alive, so a task started now waits until one is: start one with{" "}
                <code className="font-mono">npm run runner</code>.
              </p>
            ) : null}
            <TRPCReactProvider>
              <NewTaskForm projects={projects} workflows={workflows} readiness={readiness} />
            </TRPCReactProvider>
          </>
        )}
      </div>
    </PageShell>
  );
}
