"use client";
// The header's navigation and account on a narrow screen: a "Menu" button that discloses
// them below the bar (aria-expanded, Escape closes and gives focus back to the button).
// From `lg` up the button is gone and its content sits in the bar itself (display: contents).
import { useEffect, useId, useRef, useState, type ReactNode } from "react";

export function HeaderMenu({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    const onPointer = (e: PointerEvent) => {
      const target = e.target as Node;
      if (!panel.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("pointerdown", onPointer);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("pointerdown", onPointer);
    };
  }, [open]);

  return (
    <>
      <button
        ref={button}
        type="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((o) => !o)}
        className="ml-1 inline-flex items-center gap-1.5 rounded-md px-2.5 py-1.5 text-sm font-medium text-zinc-800 ring-1 ring-zinc-300 ring-inset hover:bg-zinc-100 lg:hidden dark:text-zinc-200 dark:ring-zinc-700 dark:hover:bg-zinc-800"
      >
        <svg viewBox="0 0 16 16" className="size-4" aria-hidden>
          {open ? (
            <path d="M4 4l8 8M12 4l-8 8" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
          ) : (
            <path d="M2.5 4.5h11M2.5 8h11M2.5 11.5h11" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
          )}
        </svg>
        Menu
      </button>
      <div
        ref={panel}
        id={id}
        className={`${open ? "flex" : "hidden"} absolute inset-x-0 top-full flex-col gap-3 border-b border-zinc-200 bg-white px-4 py-3 shadow-md lg:contents dark:border-zinc-800 dark:bg-zinc-950`}
      >
        {children}
      </div>
    </>
  );
}
