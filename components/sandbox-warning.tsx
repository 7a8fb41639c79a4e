// The banner every page shows operators and admins while a live runner runs agents and test
// commands outside the sandbox (docs/operations.md, "The sandbox"): which runner, where, and
// why, and where the fallback is described. Viewers do not see it: they start nothing and
// could not act on it. The page shell (app/_lib/page-shell.tsx) reads the runners.
export interface UnsandboxedRunner {
  id: string;
  host: string;
  reason: string | null;
}

export function SandboxWarning({ runners }: { runners: UnsandboxedRunner[] }) {
  if (runners.length === 0) return null;
  const one = runners.length === 1;
  return (
    <section
      aria-labelledby="sandbox-warning-title"
      data-testid="sandbox-warning"
      className="rounded-md border border-amber-300 bg-amber-50 px-4 py-3 text-sm text-amber-900 dark:border-amber-900/70 dark:bg-amber-950/40 dark:text-amber-200"
    >
      <h2 id="sandbox-warning-title" className="font-semibold">
        {one ? "A runner runs agents without the sandbox" : `${runners.length} runners run agents without the sandbox`}
      </h2>
      <ul className="mt-1 space-y-0.5">
        {runners.map((r) => (
          <li key={r.id} data-testid="unsandboxed-runner">
            <code className="font-mono break-all">{r.id}</code> on <code className="font-mono break-all">{r.host}</code>:{" "}
            {r.reason ?? "no reason given"}
          </li>
        ))}
      </ul>
      <p className="mt-1 text-amber-800 dark:text-amber-300/90">
        There, agents and test commands run as the runner&apos;s OS user and can read what it can. Install bubblewrap (or drop{" "}
        <code className="font-mono">CATCAFE_SANDBOX=off</code>) and restart {one ? "it" : "them"}, or follow the fallback in{" "}
        <code className="font-mono">docs/security.md</code> (&ldquo;What remains the admin&apos;s&rdquo;): runners under an OS user of their
        own that owns nothing but the workspaces.
      </p>
    </section>
  );
}
