"use client";
// Keyboard navigation of a server-rendered table: j / k (or ↓ / ↑) move the selection over
// rows marked `data-session-row`, Enter (or o) opens the selected row's `data-href`.
// Typing in a field is never intercepted.
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import { isSingleCharacterKey, singleKeyShortcutsOn } from "../keyboard-shortcuts";

function rows(): HTMLElement[] {
  return Array.from(document.querySelectorAll<HTMLElement>("[data-session-row]"));
}

export function RowKeys() {
  const router = useRouter();
  const selected = useRef<string | null>(null);

  useEffect(() => {
    const select = (row: HTMLElement | undefined) => {
      for (const r of rows()) r.removeAttribute("data-selected");
      if (!row) return;
      row.setAttribute("data-selected", "");
      selected.current = row.dataset.href ?? null;
      row.scrollIntoView({ block: "nearest" });
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const target = e.target as HTMLElement | null;
      if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT", "BUTTON"].includes(target.tagName))) return;
      if (isSingleCharacterKey(e) && !singleKeyShortcutsOn()) return;
      const all = rows();
      if (all.length === 0) return;
      const index = all.findIndex((r) => r.dataset.href === selected.current);
      if (e.key === "j" || e.key === "ArrowDown") {
        e.preventDefault();
        select(all[Math.min(all.length - 1, index + 1)]);
      } else if (e.key === "k" || e.key === "ArrowUp") {
        e.preventDefault();
        select(all[Math.max(0, index === -1 ? 0 : index - 1)]);
      } else if ((e.key === "Enter" || e.key === "o") && index >= 0) {
        e.preventDefault();
        const href = all[index]?.dataset.href;
        if (href) router.push(href);
      } else if (e.key === "Escape") {
        select(undefined);
        selected.current = null;
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [router]);

  return null;
}
