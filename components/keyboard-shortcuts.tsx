"use client";
// Single-key shortcuts (j, k, o, /, c, f, [ and ]) can be turned off (WCAG 2.1.4: a speech
// input user or a stray key press should not act). The choice is this browser's, kept in
// localStorage; arrows, Home, End, Enter and Escape are not single characters and stay on.
import { useSyncExternalStore } from "react";

const STORAGE_KEY = "catcafe.single-key-shortcuts";
const CHANGED = "catcafe:shortcuts-changed";

/** Whether single-character shortcuts may act; read at key time so a change applies at once. */
export function singleKeyShortcutsOn(): boolean {
  try {
    return window.localStorage.getItem(STORAGE_KEY) !== "off";
  } catch {
    return true; // storage refused (private mode): the default
  }
}

/** True for a key press a single-key shortcut would act on: one character, no modifier. */
export function isSingleCharacterKey(e: KeyboardEvent): boolean {
  return e.key.length === 1 && !e.metaKey && !e.ctrlKey && !e.altKey;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener(CHANGED, onChange);
  window.addEventListener("storage", onChange);
  return () => {
    window.removeEventListener(CHANGED, onChange);
    window.removeEventListener("storage", onChange);
  };
}

export function ShortcutsToggle({ className = "" }: { className?: string }) {
  const on = useSyncExternalStore(subscribe, singleKeyShortcutsOn, () => true);
  return (
    <label className={`inline-flex cursor-pointer items-center gap-1.5 text-xs text-zinc-600 dark:text-zinc-300 ${className}`}>
      <input
        type="checkbox"
        className="size-3.5 accent-sky-700"
        checked={on}
        onChange={(e) => {
          try {
            window.localStorage.setItem(STORAGE_KEY, e.target.checked ? "on" : "off");
          } catch {
            // storage refused: nothing to keep
          }
          window.dispatchEvent(new Event(CHANGED));
        }}
      />
      Single-key shortcuts
    </label>
  );
}
