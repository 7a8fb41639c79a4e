// "Simulated agents: canned content" on the page of a session or conversation whose agents
// are all simulated (the scripted brain), so nobody takes its output for a model's work
// (docs/configuration.md, "Simulated agents").
import { simulatedWarning } from "@/lib/simulated";

export function SimulatedNote({ workflow, projectId }: { workflow: string; projectId: string | null }) {
  return (
    <p
      role="note"
      data-testid="simulated-session-note"
      className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/30 dark:text-amber-200"
    >
      <strong>Simulated agents: canned content.</strong> Every reply here comes from a script, not an AI model.{" "}
      {simulatedWarning(workflow, projectId ?? "")}
    </p>
  );
}
