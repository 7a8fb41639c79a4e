// docker-compose.yml and the Dockerfile cannot run here (no Docker engine): check their
// structure instead, and that they agree with package.json, so a renamed script or entry
// point breaks this test rather than a user's `docker compose up`.
import fs from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string> | string[];
  ports?: (string | { target: number; published?: number | string })[];
  volumes?: (string | { source?: string; target: string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test: string | string[] };
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const compose = parse(read("docker-compose.yml"), { merge: true }) as ComposeFile;
const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string>; engines?: { node?: string } };

/** Compose's interpolation, for the forms we use: ${VAR}, ${VAR:-default}, ${VAR:?error}. */
function interpolate(value: string, env: Record<string, string> = {}): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind?: string, rest?: string) => {
    if (env[name]) return env[name];
    if (kind === "-") return rest ?? "";
    if (kind === "?") throw new Error(`${name} is required: ${rest}`);
    return "";
  });
}

function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

function dependsOnHealthy(service: ComposeService, dependency: string): boolean {
  const deps = service.depends_on;
  return !!deps && !Array.isArray(deps) && deps[dependency]?.condition === "service_healthy";
}

function words(command: string | string[]): string[] {
  return Array.isArray(command) ? command : command.trim().split(/\s+/);
}

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, with continuation lines joined and comments dropped. */
function dockerfileInstructions(text: string): Instruction[] {
  const logical = text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  return logical
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [op = "", ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

const dockerfile = dockerfileInstructions(read("Dockerfile"));
const indexOf = (op: string, pattern: RegExp) => dockerfile.findIndex((i) => i.op === op && pattern.test(i.args));

describe("docker-compose.yml", () => {
  const { postgres, web, runner } = compose.services;

  it("has exactly the postgres, web and runner services", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["postgres", "runner", "web"]);
  });

  it("runs PostgreSQL 18 with a healthcheck and its data on a named volume", () => {
    expect(postgres?.image).toMatch(/^postgres:18(\b|$)/);
    expect(words(postgres?.healthcheck?.test ?? []).join(" ")).toContain("pg_isready");
    // From 18 on the image keeps PGDATA under /var/lib/postgresql/18/docker: mount the parent.
    const mount = (postgres?.volumes ?? [])
      .map((v) => (typeof v === "string" ? v : `${v.source}:${v.target}`))
      .find((v) => v.endsWith(":/var/lib/postgresql"));
    expect(mount, "a volume mounted at /var/lib/postgresql").toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(mount!.split(":")[0]);
  });

  it("starts web and runner only once postgres is healthy", () => {
    expect(dependsOnHealthy(web!, "postgres")).toBe(true);
    expect(dependsOnHealthy(runner!, "postgres")).toBe(true);
  });

  it("points DATABASE_URL of web and runner at the postgres service's database", () => {
    const pgEnv = environmentOf(postgres!);
    for (const service of [web!, runner!]) {
      const url = new URL(interpolate(environmentOf(service).DATABASE_URL ?? ""));
      expect(url.protocol).toMatch(/^postgres(ql)?:$/);
      expect(url.hostname).toBe("postgres");
      expect(url.port || "5432").toBe("5432");
      expect(url.username).toBe(interpolate(pgEnv.POSTGRES_USER ?? "postgres"));
      expect(decodeURIComponent(url.password)).toBe(interpolate(pgEnv.POSTGRES_PASSWORD ?? ""));
      expect(url.pathname).toBe(`/${interpolate(pgEnv.POSTGRES_DB ?? pgEnv.POSTGRES_USER ?? "postgres")}`);
    }
  });

  it("requires NEXTAUTH_SECRET for web instead of falling back to a default", () => {
    const secret = environmentOf(web!).NEXTAUTH_SECRET ?? "";
    expect(secret).toMatch(/^\$\{NEXTAUTH_SECRET:\?.+\}$/);
    expect(() => interpolate(secret)).toThrow(/NEXTAUTH_SECRET/);
    expect(interpolate(secret, { NEXTAUTH_SECRET: "s3cret" })).toBe("s3cret");
  });

  it("publishes the web app on port 3000", () => {
    const targets = (web?.ports ?? []).map((p) => (typeof p === "string" ? Number(p.split(":").at(-1)) : p.target));
    expect(targets).toContain(3000);
    expect(dockerfile.some((i) => i.op === "EXPOSE" && i.args.split(/\s+/).includes("3000"))).toBe(true);
  });

  it("builds web and runner as one image from the Dockerfile", () => {
    for (const service of [web!, runner!]) {
      const build = typeof service.build === "string" ? { context: service.build } : service.build;
      expect(build?.context).toBe(".");
      expect(fs.existsSync(path.join(ROOT, build?.dockerfile ?? "Dockerfile"))).toBe(true);
    }
    expect(web?.image).toBeDefined();
    expect(runner?.image).toBe(web?.image);
  });

  it("runs the runner entry point that `npm run runner` runs", () => {
    expect(words(runner?.command ?? [])).toEqual(words(pkg.scripts.runner ?? "missing"));
    expect(fs.existsSync(path.join(ROOT, words(pkg.scripts.runner ?? "").at(-1)!))).toBe(true);
  });
});

describe("Dockerfile", () => {
  it("builds on Node 20 slim and runs as a non-root user", () => {
    expect(dockerfile[0]).toEqual({ op: "FROM", args: "node:20-bookworm-slim" });
    expect(pkg.engines?.node).toMatch(/^>=20\b/);
    const users = dockerfile.filter((i) => i.op === "USER").map((i) => i.args);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
  });

  it("installs dependencies (postinstall generates the Prisma client) before building with `npm run build`", () => {
    const install = indexOf("RUN", /\bnpm (install|ci)\b/);
    const build = indexOf("RUN", /\bnpm run build\b/);
    expect(install).toBeGreaterThan(-1);
    expect(build).toBeGreaterThan(install);
    expect(pkg.scripts.build).toMatch(/\bnext build\b/);
    // Everything postinstall reads must be in the image before `npm install` runs it.
    const postinstall = pkg.scripts.postinstall ?? "";
    expect(postinstall).toBe(pkg.scripts["db:generate"]);
    const copiedBeforeInstall = dockerfile
      .slice(0, install)
      .filter((i) => i.op === "COPY")
      .map((i) => i.args);
    const script = words(postinstall).find((w) => w.endsWith(".ts"))!;
    for (const needed of ["package.json", "package-lock.json", "prisma", "prisma.config.ts", script]) {
      expect(
        copiedBeforeInstall.some((args) => args.split(/\s+/).includes(needed) || args.split(/\s+/).includes(`${needed}/`)),
        `${needed} copied before npm install`,
      ).toBe(true);
    }
  });

  it("refers only to npm scripts that exist", () => {
    const named = dockerfile.flatMap((i) => [...i.args.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!));
    // It does run some (the build at least): a check over none would prove nothing.
    expect(named).toContain("build");
    for (const name of named) expect(pkg.scripts, `npm run ${name}`).toHaveProperty([name]);
  });

  it("by default applies migrations the way `npm run db:migrate` does, then runs `next start` on port 3000", () => {
    const cmd = dockerfile.filter((i) => i.op === "CMD").at(-1);
    expect(cmd, "a CMD").toBeDefined();
    const command = (JSON.parse(cmd!.args) as string[]).join(" ");
    const migrateAt = command.indexOf(pkg.scripts["db:migrate"]!);
    const startAt = command.search(/node_modules\/\.bin\/next start\b/);
    expect(migrateAt, `CMD runs ${pkg.scripts["db:migrate"]}`).toBeGreaterThan(-1);
    expect(startAt).toBeGreaterThan(migrateAt);
    expect(command).toMatch(/&& exec /); // next start becomes the main process and gets SIGTERM
    const port = dockerfile.find((i) => i.op === "ENV" && /\bPORT=3000\b/.test(i.args));
    expect(port || /-p 3000\b/.test(command)).toBeTruthy();
  });

  it("keeps dependencies, builds and local data out of the build context", () => {
    const ignored = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    for (const entry of ["node_modules", ".next", ".data", ".git", ".env"]) expect(ignored).toContain(entry);
    for (const needed of ["app", "server", "scripts", "prisma", "package.json", "package-lock.json"]) expect(ignored).not.toContain(needed);
  });
});
