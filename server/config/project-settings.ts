// What projects.json may change about a project registered by an admin: the iteration cap,
// and the allowlist only by narrowing it. A repository is written by whoever can push to
// it (and, through merged sessions, by agents), so it must never widen what commands run.
import { formatRule, matchToken, type AllowRule, type Allowlist } from "../commands/allowlist";
import { formatJsonPath, type ConfigError } from "./errors";
import { configFilePath, type ProjectConfig } from "./project-config";

/** True when every argv `narrow` allows, `wide` allows too. */
export function ruleCovers(wide: AllowRule, narrow: AllowRule): boolean {
  for (let i = 0; i < narrow.length; i++) {
    const w = wide[i];
    const n = narrow[i]!;
    if (w === "**" && i === wide.length - 1) return true;
    if (w === undefined) return false;
    // A rest wildcard in the narrow rule allows any number of arguments; only `**` covers it.
    if (n === "**") return false;
    if (w === "*") continue;
    if (/[*?{]/.test(n)) {
      if (w !== n) return false;
      continue;
    }
    if (!matchToken(w, n)) return false;
  }
  return wide.length === narrow.length || (wide.length === narrow.length + 1 && wide.at(-1) === "**");
}

export interface EffectiveProjectSettings {
  allowlist: Allowlist;
  maxIterations: number;
  errors: ConfigError[];
}

export function effectiveProjectSettings(
  config: ProjectConfig,
  admin: { allowlist: Allowlist; maxIterations: number },
): EffectiveProjectSettings {
  const errors: ConfigError[] = [];
  const requested = config.project.allowlist;
  if (requested) {
    requested.forEach((rule, i) => {
      if (!admin.allowlist.some((wide) => ruleCovers(wide, rule))) {
        errors.push({
          file: configFilePath("projects.json"),
          path: formatJsonPath(["allowlist", i]),
          message: `rule "${formatRule(rule)}" is not allowed by the project's allowlist (set by an admin); the repository's allowlist can only narrow it`,
        });
      }
    });
  }
  return { allowlist: requested ?? admin.allowlist, maxIterations: config.project.maxIterations ?? admin.maxIterations, errors };
}
