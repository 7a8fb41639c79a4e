// Shown instead of the dashboard when the database cannot be read.
import { Kbd } from "./panel";

export function DatabaseDown({ message }: { message: string }) {
  return (
    <div className="rounded-lg border border-rose-300 bg-rose-50 p-5 dark:border-rose-900/70 dark:bg-rose-950/30">
      <h2 className="text-sm font-semibold text-rose-800 dark:text-rose-300">The database is not answering</h2>
      <p className="mt-1 text-sm text-rose-700/90 dark:text-rose-300/80">
        Sessions and runners cannot be shown until it is back. Check <Kbd>DATABASE_URL</Kbd> and that PostgreSQL is running;{" "}
        <Kbd>/api/health</Kbd> reports the same state.
      </p>
      <pre className="mt-3 overflow-x-auto rounded bg-rose-100/70 px-3 py-2 font-mono text-xs text-rose-900 dark:bg-rose-950/60 dark:text-rose-200">
        {message}
      </pre>
    </div>
  );
}
