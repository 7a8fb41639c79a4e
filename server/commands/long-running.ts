// Recognises commands that do not finish on their own: dev servers, app servers, watchers,
// followers (req W8, F9). They are refused even when the allowlist matches, because a
// test step that starts a server only ends by its timeout and may leave a port taken.
// This is a heuristic over argv; the timeout and process-group kill are the backstop.
import path from "node:path";

/** Script names that by convention start a server or a watcher: `dev`, `start:api`, ... */
const SERVER_SCRIPT = /^(start|dev|develop|serve|server|preview|watch)(:.*)?$/;
// "server" in a file's name, but not in "observer" or "preserver" (an observer pattern's file is no server).
const SERVER_FILE = /(?<!ob|pre)server[^/]*\.((c|m)?(j|t)sx?|py)$|(?<!ob|pre)server$/i;
const TEST_FILE = /\.(test|spec)\.[^/]*$|^test_|_test\.py$/i;
const WATCH_FLAG = /^--watch(-?all|-files|-path)?(=.*)?$/i;
const FOLLOW_FLAG = /^(-[a-zA-Z0-9]*[fF][a-zA-Z0-9]*|--follow(=.*)?)$/;

/** Programs that only ever serve or supervise. */
const ALWAYS_LONG_RUNNING = new Set([
  "nodemon",
  "http-server",
  "live-server",
  "serve",
  "browser-sync",
  "json-server",
  "webpack-dev-server",
  "pm2",
  "forever",
  "uvicorn",
  "gunicorn",
  "hypercorn",
  "daphne",
  "waitress-serve",
  "watch",
  "watchman",
  "top",
  "htop",
]);

/** `program subcommand` pairs that serve: `next dev`, `hugo server`, ... */
const SERVING_SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  next: new Set(["dev", "start"]),
  nuxt: new Set(["dev", "start", "preview"]),
  nuxi: new Set(["dev", "start", "preview"]),
  astro: new Set(["dev", "preview"]),
  remix: new Set(["dev"]),
  gatsby: new Set(["develop", "serve"]),
  expo: new Set(["start"]),
  ng: new Set(["serve", "s"]),
  "react-scripts": new Set(["start"]),
  webpack: new Set(["serve", "server", "watch"]),
  vitest: new Set(["watch", "dev"]),
  flask: new Set(["run"]),
  streamlit: new Set(["run"]),
  rails: new Set(["s", "server"]),
  jekyll: new Set(["serve", "server", "s"]),
  hugo: new Set(["server", "serve"]),
  mkdocs: new Set(["serve"]),
  "docker-compose": new Set(["up", "watch"]),
  deno: new Set(["serve"]),
};

/** Programs that start their dev server when given no command at all: `next` is `next dev`. */
const SERVES_WITHOUT_COMMAND = new Set(["next", "nuxt"]);
const HELP_OR_VERSION = new Set(["-h", "--help", "-v", "--version"]);

/** Launchers that run another program: `npx vite`, `npm exec next dev`, `env X=1 node ...`. */
function unwrapLauncher(program: string, args: readonly string[]): string[] | null {
  const afterFlags = (rest: readonly string[], valueFlags: ReadonlySet<string> = new Set()) => {
    let i = 0;
    while (i < rest.length) {
      const arg = rest[i] as string;
      if (arg === "--") return rest.slice(i + 1);
      if (!arg.startsWith("-")) break;
      i += valueFlags.has(arg) ? 2 : 1;
    }
    return rest.slice(i);
  };
  const packageFlags = new Set(["-p", "--package", "-c", "--call"]);
  switch (program) {
    case "npx":
    case "pnpx":
    case "bunx":
      return afterFlags(args, packageFlags);
    case "npm":
    case "pnpm":
    case "yarn":
      return args[0] === "exec" || args[0] === "x" || args[0] === "dlx" ? afterFlags(args.slice(1), packageFlags) : null;
    case "bundle":
      return args[0] === "exec" ? afterFlags(args.slice(1)) : null;
    case "env": {
      const rest = afterFlags(args, new Set(["-u", "--unset", "-C", "--chdir"]));
      const firstCommand = rest.findIndex((arg) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg));
      return firstCommand === -1 ? null : rest.slice(firstCommand);
    }
    case "nice":
    case "nohup":
    case "time":
    case "setsid":
      return afterFlags(args, new Set(["-n", "--adjustment"]));
    default:
      return null;
  }
}

/** Positional arguments, skipping flags (and the values of the flags that take one). */
function positionals(args: readonly string[], valueFlags: ReadonlySet<string> = new Set()): string[] {
  const found: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") return [...found, ...args.slice(i + 1)];
    if (arg.startsWith("-") && arg !== "-") {
      if (valueFlags.has(arg)) i++;
      continue;
    }
    found.push(arg);
  }
  return found;
}

function packageScriptProblem(program: string, args: readonly string[]): string | null {
  const valueFlags = new Set(["--prefix", "-C", "--dir", "--filter", "-F", "-w", "--workspace", "--cwd"]);
  const [sub, script] = positionals(args, valueFlags);
  if (sub === undefined) return null;
  if (program === "npm" && (sub === "start" || sub === "restart")) return `\`npm ${sub}\` starts a long-running server`;
  const runVerbs = program === "npm" ? ["run", "run-script", "rum", "urn"] : ["run"];
  const name = runVerbs.includes(sub) ? script : program === "npm" ? undefined : sub;
  if (name !== undefined && SERVER_SCRIPT.test(name)) return `the \`${name}\` script conventionally starts a server or a watcher`;
  return null;
}

/** `server.js`, `dev-server.mjs`, `server.py`; but not `server.test.js`, a test about one. */
function isServerScript(script: string): boolean {
  const name = path.basename(script);
  return SERVER_FILE.test(name) && !TEST_FILE.test(name);
}

const NODE_VALUE_FLAGS = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "-C",
  "--conditions",
  "--env-file",
  "--inspect-port",
]);
const INLINE_CODE_FLAGS = new Set(["-e", "--eval", "-p", "--print", "--test", "-c", "--check"]);

function scriptRunnerProblem(program: string, args: readonly string[]): string | null {
  if (args.some((arg) => INLINE_CODE_FLAGS.has(arg))) return null;
  const positional = positionals(args, NODE_VALUE_FLAGS);
  const script = program === "deno" || program === "bun" ? (positional[0] === "run" ? positional[1] : positional[0]) : positional[0];
  if (script !== undefined && isServerScript(script)) return `\`${program} ${script}\` runs a server script`;
  return null;
}

function pythonProblem(args: readonly string[]): string | null {
  const moduleIndex = args.findIndex((arg) => arg === "-m");
  if (moduleIndex !== -1) {
    const moduleName = args[moduleIndex + 1] ?? "";
    const next = args[moduleIndex + 2];
    if (/^(http\.server|SimpleHTTPServer|uvicorn|gunicorn|hypercorn|daphne)$/.test(moduleName))
      return `\`python -m ${moduleName}\` starts a server`;
    if ((moduleName === "flask" || moduleName === "streamlit") && next === "run") return `\`python -m ${moduleName} run\` starts a server`;
    if (moduleName === "django" && next === "runserver") return "`python -m django runserver` starts a server";
    return null;
  }
  if (args.some((arg) => arg === "-c")) return null;
  const [script, sub] = positionals(args, new Set(["-W", "-X"]));
  if (script === undefined) return null;
  if (path.basename(script) === "manage.py" && sub === "runserver") return "`manage.py runserver` starts a server";
  if (isServerScript(script)) return `\`python ${script}\` runs a server script`;
  return null;
}

function viteProblem(args: readonly string[]): string | null {
  const [sub] = positionals(args, new Set(["--config", "-c", "--mode", "-m", "--port", "--host", "--base"]));
  if (sub !== "build" && sub !== "optimize") {
    return `\`vite${sub ? ` ${sub}` : ""}\` starts a dev server (only \`vite build\` finishes)`;
  }
  return null;
}

function dockerProblem(args: readonly string[]): string | null {
  const positional = positionals(args, new Set(["-f", "--file", "-p", "--project-name", "--context", "-H", "--host"]));
  if (positional[0] === "compose" && (positional[1] === "up" || positional[1] === "watch"))
    return `\`docker compose ${positional[1]}\` starts long-running services`;
  if (
    (positional[0] === "logs" || (positional[0] === "compose" && positional[1] === "logs")) &&
    args.some((arg) => FOLLOW_FLAG.test(arg))
  ) {
    return "`docker logs --follow` never finishes";
  }
  return null;
}

function programProblem(program: string, args: readonly string[]): string | null {
  if (ALWAYS_LONG_RUNNING.has(program)) return `\`${program}\` runs until stopped`;
  const serving = SERVING_SUBCOMMANDS[program];
  if (serving) {
    const [sub] = positionals(args, new Set(["-p", "--port", "-H", "--hostname", "-c", "--config"]));
    if (sub !== undefined && serving.has(sub)) return `\`${program} ${sub}\` starts a long-running server`;
    if (sub === undefined && SERVES_WITHOUT_COMMAND.has(program) && !args.some((arg) => HELP_OR_VERSION.has(arg)))
      return `\`${program}\` with no command starts its dev server`;
    // Not a serving subcommand: `deno run server.ts` still runs a script (below).
  }
  if (/^python(\d+(\.\d+)?)?$|^py$/.test(program)) return pythonProblem(args);
  switch (program) {
    case "npm":
    case "pnpm":
    case "yarn":
    case "bun":
      return packageScriptProblem(program, args) ?? (program === "bun" ? scriptRunnerProblem(program, args) : null);
    case "node":
    case "nodejs":
    case "tsx":
    case "ts-node":
    case "deno":
      return scriptRunnerProblem(program, args);
    case "vite":
      return viteProblem(args);
    case "docker":
    case "podman":
      return dockerProblem(args);
    case "tail":
    case "journalctl":
      return args.some((arg) => FOLLOW_FLAG.test(arg)) ? `\`${program} --follow\` never finishes` : null;
    case "tsc":
      return args.includes("-w") ? "`tsc -w` keeps watching" : null;
    case "php":
      return args.includes("-S") ? "`php -S` starts a server" : null;
    case "ruby":
      return args.includes("-run") && args.includes("httpd") ? "`ruby -run -e httpd` starts a server" : null;
    case "nc":
    case "ncat":
    case "netcat":
      return args.some((arg) => /^-[a-zA-Z]*l/.test(arg)) ? `\`${program} -l\` listens until stopped` : null;
    case "sleep":
      return args.includes("infinity") ? "`sleep infinity` never finishes" : null;
    default:
      return null;
  }
}

/**
 * Why argv looks like a server, watcher or follower that will not finish on its own, or
 * null. Launchers (`npx`, `npm exec`, `bundle exec`, `env`) are looked through.
 */
export function longRunningReason(argv: readonly string[]): string | null {
  const watchFlag = argv.find((arg) => WATCH_FLAG.test(arg));
  if (watchFlag) return `\`${watchFlag}\` keeps the command running`;
  let current: readonly string[] = argv;
  // Bounded: each unwrap removes at least the launcher itself.
  for (let depth = 0; depth < 5; depth++) {
    const [first, ...args] = current;
    if (first === undefined) return null;
    const program = path.basename(first);
    const problem = programProblem(program, args);
    if (problem) return problem;
    const inner = unwrapLauncher(program, args);
    if (!inner || inner.length === 0) return null;
    current = inner;
  }
  return null;
}
