// What a runner can run (docs/scaling.md, "Which runner runs a step"): the registered projects
// it has clones of (and why not, for the others), its labels (CATCAFE_RUNNER_LABELS) and the
// agent CLIs it found. Registered on its `runners` row at start and refreshed while it runs;
// its claims pass the same to the pick (./dispatch.ts), so it takes only steps it can run.
import { missingClone, repositoryMapping } from "../workspaces/repo";

/** The channel the projects table's trigger rings when a project is added, moved or removed (migration 20261130110000). */
export const PROJECTS_CHANNEL = "catcafe_projects";

export interface RegisteredProject {
  id: string;
  repoPath: string;
}

/** A registered project this runner has no usable clone of, and why. */
export interface UnservedProject {
  projectId: string;
  repoPath: string;
  reason: string;
}

export interface ServedProjects {
  /** Registered repoPaths whose clone here is a git repository. */
  served: string[];
  unserved: UnservedProject[];
}

/**
 * Which registered projects this runner can serve: the clone a project's repoPath maps to
 * (`localPath`: CATCAFE_REPOSITORY_PATHS, else the repoPath itself) exists and is the top of
 * a git checkout. Whether it holds a session's commits is found when a step runs.
 */
export async function projectsServed(
  projects: readonly RegisteredProject[],
  localPath: (repoPath: string) => string,
): Promise<ServedProjects> {
  const result: ServedProjects = { served: [], unserved: [] };
  for (const p of projects) {
    const local = localPath(p.repoPath);
    const reason = await missingClone(local, repositoryMapping(p.repoPath, local));
    if (reason) result.unserved.push({ projectId: p.id, repoPath: p.repoPath, reason });
    else if (!result.served.includes(p.repoPath)) result.served.push(p.repoPath);
  }
  return result;
}

/** The agent CLI kinds a shell detection (server/agents/shells/detect.ts) found supported. */
export function supportedClis(shells: unknown): string[] {
  if (!Array.isArray(shells)) return [];
  return shells.flatMap((s: unknown) => {
    const shell = s as { shell?: unknown; supported?: unknown };
    return typeof shell.shell === "string" && shell.supported === true ? [shell.shell] : [];
  });
}
