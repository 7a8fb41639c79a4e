// A repository's `.catcafe/` configuration as a new task would load it (committed at
// HEAD), with how it stands: the commit read, the files found and every error, or why the
// repository could not be read at all. What the settings pages show for each project.
import { resolveBaseCommit } from "../workspaces";
import { formatConfigErrors } from "./errors";
import { loadProjectConfigAtCommit, type LoadedProjectConfig } from "./load";
import type { ProjectConfig } from "./project-config";
import { loadSettings } from "./settings";

export interface RepoConfigStatus {
  /** The commit read (HEAD of the repository), or null when it could not be resolved. */
  commit: string | null;
  /** The repository has a `.catcafe/` directory at that commit. */
  found: boolean;
  configVersion: string | null;
  files: string[];
  /** `file: path: problem`, every one. */
  errors: string[];
  /** Why the repository could not be read from the web server, when it could not. */
  unreadable: string | null;
}

export interface LoadedRepoConfig {
  status: RepoConfigStatus;
  config: ProjectConfig | null;
}

/** The repository's `.catcafe/` as a new task would load it: committed at HEAD, with the global settings file. */
export async function loadConfigAtHead(repoPath: string): Promise<LoadedRepoConfig> {
  let commit: string | null = null;
  try {
    commit = await resolveBaseCommit(repoPath);
    const settings = loadSettings();
    const loaded: LoadedProjectConfig = await loadProjectConfigAtCommit(repoPath, commit, {
      settings: settings.settings,
      settingsFile: settings.file,
    });
    const errors = formatConfigErrors([...(loaded.found ? settings.errors : []), ...loaded.errors]);
    return {
      status: {
        commit,
        found: loaded.found,
        configVersion: loaded.config?.configVersion ?? null,
        files: loaded.config?.files.map((f) => `.catcafe/${f}`) ?? [],
        errors,
        unreadable: null,
      },
      config: loaded.config,
    };
  } catch (err) {
    return {
      status: {
        commit,
        found: false,
        configVersion: null,
        files: [],
        errors: [],
        unreadable: err instanceof Error ? err.message : String(err),
      },
      config: null,
    };
  }
}
