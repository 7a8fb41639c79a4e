// The settings pages' frame: a section list on the left, the section on the right.
import type { ReactNode } from "react";

export type SettingsSection = "projects" | "agents" | "shells" | "brains" | "workflows" | "users" | "tokens";

const SECTIONS: Array<{ id: SettingsSection; label: string; hint: string }> = [
  { id: "projects", label: "Projects", hint: "repositories and allowlists" },
  { id: "agents", label: "Agents", hint: "who plays each role" },
  { id: "shells", label: "Shells", hint: "agent CLIs on this machine" },
  { id: "brains", label: "Brains", hint: "models and their check" },
  { id: "workflows", label: "Workflows", hint: "FSM definitions, drawn" },
  { id: "users", label: "Users", hint: "people, roles, invitations" },
  { id: "tokens", label: "API tokens", hint: "for scripts and the CLI" },
];

export function SettingsFrame({
  active,
  title,
  description,
  children,
}: {
  active: SettingsSection;
  title: string;
  description: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="grid grid-cols-1 items-start gap-5 md:grid-cols-[200px_minmax(0,1fr)]">
      <nav aria-label="Settings" className="md:sticky md:top-16">
        <h1 className="mb-2 px-2 text-xs font-semibold tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Settings</h1>
        <ul className="flex flex-wrap gap-1 md:block md:space-y-0.5">
          {SECTIONS.map((s) => (
            <li key={s.id}>
              <a
                href={`/settings/${s.id}`}
                aria-current={s.id === active ? "page" : undefined}
                className={`block rounded-md px-2 py-1.5 ${s.id === active ? "bg-white shadow-sm ring-1 ring-zinc-200 dark:bg-zinc-900 dark:ring-zinc-800" : "hover:bg-zinc-100 dark:hover:bg-zinc-900/60"}`}
              >
                <span
                  className={`block text-sm ${s.id === active ? "font-medium text-zinc-900 dark:text-zinc-100" : "text-zinc-700 dark:text-zinc-300"}`}
                >
                  {s.label}
                </span>
                <span className="hidden text-xs text-zinc-500 md:block dark:text-zinc-400">{s.hint}</span>
              </a>
            </li>
          ))}
        </ul>
        <p className="mt-4 hidden px-2 text-xs leading-relaxed text-zinc-500 md:block dark:text-zinc-400">
          Configuration comes from settings.json, the server and project settings admins edit under Projects (each change recorded, with who
          made it), and each repository&apos;s <code className="font-mono">.catcafe/</code> files, edited in the repository. API keys are
          shown only by the name of their variable.
        </p>
      </nav>
      <section className="min-w-0 space-y-4">
        <header>
          <h2 className="text-lg font-semibold tracking-tight">{title}</h2>
          <p className="text-xs text-zinc-500 dark:text-zinc-400">{description}</p>
        </header>
        {children}
      </section>
    </div>
  );
}

export function NeedsRole({ role, what }: { role: string; what: string }) {
  return (
    <div className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/30 dark:text-amber-200">
      {what} is shown to the <span className="font-mono">{role}</span> role and above. Ask an admin for access; workflow definitions and
      your own API tokens are open to everyone.
    </div>
  );
}
