// A bake-off's contenders as a person types them (the CLI's `--bake-off`, the MCP tool): a list of
// `coder` or `coder:model`, comma-separated — `claude-coder,codex-coder:gpt-5,codex-coder:o3`.

export interface ContenderArg {
  coder: string;
  model?: string;
}

/** `claude-coder,codex-coder:gpt-5` → the contenders, in order; empty entries are skipped. */
export function parseContenders(text: string): ContenderArg[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.indexOf(":");
      if (at < 0) return { coder: part };
      const coder = part.slice(0, at).trim();
      const model = part.slice(at + 1).trim();
      return model ? { coder, model } : { coder };
    });
}
