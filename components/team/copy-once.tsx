"use client";
// A secret shown once (an API token, an invitation link): a read-only field to select, a
// copy button, and the warning that it cannot be shown again.
import { useRef, useState } from "react";
import { FIELD_CLASS } from "@/components/form-classes";
import { BUTTON_CLASS } from "./classes";

export function CopyOnce({ label, value, note, testId }: { label: string; value: string; note: string; testId?: string }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<"yes" | "select" | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("yes");
    } catch {
      // No clipboard here (a page served over plain HTTP to another host): select it for the person to copy.
      field.current?.select();
      setCopied("select");
    }
  };
  return (
    <div className="space-y-2 rounded-md border border-emerald-300 bg-emerald-50 p-3 dark:border-emerald-900/60 dark:bg-emerald-950/30">
      <label className="block text-xs font-medium text-emerald-900 dark:text-emerald-200">
        {label}
        <div className="mt-1.5 flex gap-2">
          <input
            ref={field}
            readOnly
            value={value}
            data-testid={testId}
            onFocus={(e) => e.currentTarget.select()}
            className={`${FIELD_CLASS} font-mono text-xs`}
          />
          <button type="button" onClick={() => void copy()} className={BUTTON_CLASS}>
            {copied === "yes" ? "Copied" : "Copy"}
          </button>
        </div>
      </label>
      <p className="text-xs text-emerald-900 dark:text-emerald-200" aria-live="polite">
        {copied === "select" ? "Selected: press Ctrl+C (⌘C) to copy. " : ""}
        {note}
      </p>
    </div>
  );
}
