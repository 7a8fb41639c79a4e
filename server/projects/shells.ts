// The agent CLIs as the settings pages show them: the ones found on the web server's
// machine (path, version, capabilities; each runner detects its own) and the shells each
// project's `.catcafe/shells.json` configures at HEAD.
import type { ShellName } from "../agents/shells/cli-agent";
import { detectShell, SHELL_NAMES, type DetectedShell } from "../agents/shells/detect";
import { AppError } from "../errors";
import { loadConfigAtHead } from "../config/at-head";
import type { Queryable } from "../db/pool";
import { getProject, listProjectRecords } from "./projects";

export interface ConfiguredShell {
  projectId: string;
  id: string;
  kind: string;
  command: string;
  capabilities: string[];
  builtin: boolean;
}

export interface ShellsOverview {
  /** The agent CLIs looked for on the web server's machine (runners may differ). */
  detected: DetectedShell[] | null;
  /** Why detection is not available, when it is not. */
  unavailable: string | null;
  detectedAt: string | null;
  configured: ConfiguredShell[];
}

const DETECT_CACHE_MS = 60_000;
let detection: { at: number; result: Promise<DetectedShell[]> } | null = null;

/**
 * Detection runs each CLI twice (`--version`, `--help`): cached for a minute. The module is
 * loaded on first use, so a detection module that cannot load in this process makes this
 * section "not available" instead of taking the whole API down with it.
 */
function detectCached(now = Date.now()): Promise<DetectedShell[]> {
  if (!detection || now - detection.at > DETECT_CACHE_MS) {
    const result = import("../agents/shells/detect").then(({ detectShells }) => detectShells({ timeoutMs: 15_000 }));
    detection = { at: now, result };
    result.catch(() => {
      detection = null;
    });
  }
  return detection.result;
}

export async function shellsOverview(db: Queryable): Promise<ShellsOverview> {
  const records = await listProjectRecords(db);
  const configs = await Promise.all(records.map(async (r) => ({ id: r.id, loaded: await loadConfigAtHead(r.repoPath) })));
  const configured = configs.flatMap(({ id, loaded }) =>
    Object.values(loaded.config?.shells ?? {}).map((s) => ({
      projectId: id,
      id: s.id,
      kind: s.kind,
      command: s.command,
      capabilities: [...s.capabilities],
      builtin: s.builtin,
    })),
  );
  try {
    const detected = await detectCached();
    return { detected, unavailable: null, detectedAt: new Date(detection?.at ?? Date.now()).toISOString(), configured };
  } catch (err) {
    return {
      detected: null,
      unavailable: `shell detection failed: ${err instanceof Error ? err.message : String(err)}`,
      detectedAt: null,
      configured,
    };
  }
}

/** A CLI a project's `.catcafe/shells.json` configures with its own command, as detected there. */
export type ConfiguredShellCheck = DetectedShell & { shellId: string; command: string; projectId: string };

/**
 * `catcafe shells detect --project <id>`: each claude / codex / gemini shell of the project's
 * `.catcafe/shells.json` (at HEAD) that names its own `command`, probed at that command with
 * its own version range, exactly as the runner would run it.
 */
export async function detectConfiguredShells(db: Queryable, projectId: string): Promise<ConfiguredShellCheck[]> {
  const project = await getProject(db, projectId);
  const { config, status } = await loadConfigAtHead(project.repoPath);
  if (!config) {
    if (status.errors.length)
      throw new AppError("PRECONDITION_FAILED", `project ${projectId}'s .catcafe/ does not load:\n  ${status.errors.join("\n  ")}`);
    return [];
  }
  const own = Object.values(config.shells).filter(
    (s): s is typeof s & { kind: ShellName } => !s.builtin && (SHELL_NAMES as readonly string[]).includes(s.kind) && s.command !== s.kind,
  );
  return Promise.all(
    own.map(async (s) => {
      const range = "versionRange" in s && typeof s.versionRange === "string" ? s.versionRange : undefined;
      const detected = await detectShell(s.kind, { commands: { [s.kind]: s.command }, ...(range ? { ranges: { [s.kind]: range } } : {}) });
      return { ...detected, shellId: s.id, command: s.command, projectId };
    }),
  );
}
