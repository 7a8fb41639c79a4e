// Colours per agent role (and the operator), spelled out in full for Tailwind's scanner.
export interface RoleStyle {
  /** The round avatar. */
  avatar: string;
  /** The name label. */
  text: string;
  /** A speech bubble's border and tint. */
  bubble: string;
}

const ROLE_STYLES: Record<string, RoleStyle> = {
  coder: {
    avatar: "bg-sky-600 text-white dark:bg-sky-500",
    text: "text-sky-700 dark:text-sky-300",
    bubble: "border-sky-200 bg-sky-50/60 dark:border-sky-900/70 dark:bg-sky-950/30",
  },
  reviewer: {
    avatar: "bg-violet-600 text-white dark:bg-violet-500",
    text: "text-violet-700 dark:text-violet-300",
    bubble: "border-violet-200 bg-violet-50/60 dark:border-violet-900/70 dark:bg-violet-950/30",
  },
  tester: {
    avatar: "bg-amber-600 text-white dark:bg-amber-500 dark:text-zinc-950",
    text: "text-amber-700 dark:text-amber-300",
    bubble: "border-amber-200 bg-amber-50/60 dark:border-amber-900/70 dark:bg-amber-950/30",
  },
  planner: {
    avatar: "bg-teal-600 text-white dark:bg-teal-500",
    text: "text-teal-700 dark:text-teal-300",
    bubble: "border-teal-200 bg-teal-50/60 dark:border-teal-900/70 dark:bg-teal-950/30",
  },
  executor: {
    avatar: "bg-indigo-600 text-white dark:bg-indigo-500",
    text: "text-indigo-700 dark:text-indigo-300",
    bubble: "border-indigo-200 bg-indigo-50/60 dark:border-indigo-900/70 dark:bg-indigo-950/30",
  },
  operator: {
    avatar: "bg-zinc-800 text-white dark:bg-zinc-200 dark:text-zinc-900",
    text: "text-zinc-800 dark:text-zinc-200",
    bubble: "border-zinc-200 bg-white dark:border-zinc-700 dark:bg-zinc-900",
  },
};

export function roleStyle(role: string): RoleStyle {
  return ROLE_STYLES[role] ?? ROLE_STYLES.operator!;
}

export function RoleAvatar({ role, label }: { role: string; label?: string }) {
  const text = (label ?? role).slice(0, 1).toUpperCase();
  return (
    <span
      aria-hidden
      className={`flex size-6 shrink-0 items-center justify-center rounded-full text-xs font-semibold ${roleStyle(role).avatar}`}
    >
      {text}
    </span>
  );
}
