// What every command runs with: its output, and the server connection resolved from, in
// order, `--url` / CATCAFE_URL / CATCAFE_TOKEN and the config file of `catcafe login`.
import type { Command } from "commander";
import { createCatCafeClient, normalizeServerUrl, type CatCafeClient, type CatCafeClientOptions } from "../lib/client";
import { configPath, readConfig, type CliConfig } from "./config-file";
import { CliError } from "./errors";
import { Output } from "./output";

export const DEFAULT_URL = "http://localhost:3000";

export interface GlobalOptions {
  json?: boolean;
  quiet?: boolean;
  url?: string;
}

export interface Connection extends CatCafeClientOptions {
  url: string;
  token: string;
}

export class CliContext {
  readonly out: Output;
  readonly configFile: string;
  private clientCache: CatCafeClient | null = null;

  constructor(
    readonly globals: GlobalOptions,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.out = new Output(Boolean(globals.json), Boolean(globals.quiet));
    this.configFile = configPath(env);
  }

  static of(command: Command): CliContext {
    return new CliContext(command.optsWithGlobals<GlobalOptions>());
  }

  config(): CliConfig | null {
    return readConfig(this.configFile);
  }

  /** The server URL asked for (flag, environment), else the saved one, else localhost:3000. */
  serverUrl(): string {
    const asked = this.globals.url ?? this.env.CATCAFE_URL;
    return normalizeServerUrl(asked ?? this.config()?.url ?? DEFAULT_URL);
  }

  connection(): Connection {
    const url = this.serverUrl();
    if (this.env.CATCAFE_TOKEN) return { url, token: this.env.CATCAFE_TOKEN };
    const saved = this.config();
    if (!saved)
      throw new CliError(`not signed in (no ${this.configFile})`, {
        code: "NOT_SIGNED_IN",
        hint: `Run \`catcafe login --url ${url}\`, or set CATCAFE_TOKEN.`,
      });
    if (normalizeServerUrl(saved.url) !== url) {
      throw new CliError(`not signed in to ${url} (the saved token is for ${saved.url})`, {
        code: "NOT_SIGNED_IN",
        hint: `Run \`catcafe login --url ${url}\`, or set CATCAFE_TOKEN.`,
      });
    }
    return { url, token: saved.token };
  }

  client(): CatCafeClient {
    this.clientCache ??= createCatCafeClient(this.connection());
    return this.clientCache;
  }
}
