// Configuration problems as data: which file, where inside it (a JSON path such as
// `agents[2].defaultBrain`) and what is wrong, plus the one formatter every surface uses
// (`.catcafe/agents.json: agents[2].defaultBrain: unknown brain "gpt5"`).
import { AppError } from "../errors";

export interface ConfigError {
  /** The file as a person finds it: `.catcafe/agents.json`, or the settings file's path. */
  file: string;
  /** JSON path inside the file (`agents[2].defaultBrain`); empty for the file as a whole. */
  path: string;
  message: string;
}

export type JsonPath = ReadonlyArray<PropertyKey>;

const PLAIN_KEY = /^[A-Za-z0-9_$][A-Za-z0-9_$-]*$/;

/** `["agents", 2, "defaultBrain"]` → `agents[2].defaultBrain`; odd keys are quoted: `env["A B"]`. */
export function formatJsonPath(path: JsonPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = String(segment);
      if (PLAIN_KEY.test(key)) out += out === "" ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

export function formatConfigError(error: ConfigError): string {
  return error.path ? `${error.file}: ${error.path}: ${error.message}` : `${error.file}: ${error.message}`;
}

export function formatConfigErrors(errors: readonly ConfigError[]): string[] {
  return errors.map(formatConfigError);
}

/** Errors in file order, then path order, each once: output that does not shuffle between runs. */
export function sortConfigErrors(errors: readonly ConfigError[], fileOrder: readonly string[] = []): ConfigError[] {
  const rank = (file: string) => {
    const i = fileOrder.indexOf(file);
    return i === -1 ? fileOrder.length : i;
  };
  const seen = new Set<string>();
  return errors
    .map((e, index) => ({ e, index }))
    .sort((a, b) => rank(a.e.file) - rank(b.e.file) || a.index - b.index)
    .map(({ e }) => e)
    .filter((e) => {
      const key = formatConfigError(e);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

/** Thrown where a caller cannot go on (starting a task): carries every error, formatted. */
export function configInvalidError(intro: string, errors: readonly ConfigError[]): AppError {
  const lines = formatConfigErrors(errors);
  return new AppError("PRECONDITION_FAILED", `${intro}\n${lines.map((l) => `  ${l}`).join("\n")}`, { configErrors: lines });
}
