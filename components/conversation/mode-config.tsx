"use client";
// A mode's config typed as JSON (the mode picker's and the start form's): the text, its parse
// on submit (a text that is not JSON is said beside the field, nothing is sent), and the
// field with its errors — the parse's and the server's (`fieldErrors.modeConfig`).
import { useState } from "react";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import { parseModeConfig } from "@/lib/mode-examples";

export function useModeConfig(initial: unknown) {
  const [text, setText] = useState(JSON.stringify(initial, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  return {
    text,
    /** Replaces the text (another mode's example). */
    set: (value: unknown) => setText(JSON.stringify(value, null, 2)),
    setText,
    parseError,
    /** The config to send, or undefined (and the parse error shown) when the text is not JSON. */
    read(): { value: unknown } | undefined {
      const parsed = parseModeConfig(text);
      setParseError("error" in parsed ? parsed.error : null);
      return "error" in parsed ? undefined : parsed;
    },
  };
}

export function ModeConfigField({
  id,
  label,
  config,
  serverErrors,
  readOnly = false,
  minHeight = "min-h-28",
}: {
  id: string;
  label: string;
  config: ReturnType<typeof useModeConfig>;
  serverErrors: string[] | undefined;
  readOnly?: boolean;
  minHeight?: string;
}) {
  return (
    <div>
      <label className={LABEL_CLASS} htmlFor={id}>
        {label}
      </label>
      <textarea
        id={id}
        className={`${FIELD_CLASS} ${minHeight} font-mono text-xs`}
        value={config.text}
        readOnly={readOnly}
        onChange={(e) => config.setText(e.target.value)}
      />
      {[...(config.parseError ? [config.parseError] : []), ...(serverErrors ?? [])].map((m) => (
        <p key={m} role="alert" className="mt-1 text-xs text-rose-700 dark:text-rose-300">
          {m}
        </p>
      ))}
    </div>
  );
}
