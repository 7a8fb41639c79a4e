import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { findMatchingRule, formatRule, matchRule, ZAllowlist, ZAllowRule, type Allowlist } from "../../server/commands/allowlist";
import { checkCommand, formatArgv } from "../../server/commands/check";
import { pathEscapeReason } from "../../server/commands/paths";

const EXAMPLE: Allowlist = [
  ["node", "--test", "**"],
  ["npm", "test"],
  ["npx", "vitest", "run", "**"],
  ["git", "diff", "**"],
];

describe("allowlist rules", () => {
  it.each<[string[], string[], boolean]>([
    [["npm", "test"], ["npm", "test"], true],
    [["npm", "test"], ["npm", "test", "--", "-x"], false],
    [["npm", "test"], ["npm"], false],
    [["npm", "test"], ["npm", "tests"], false],
    [["node", "--test", "**"], ["node", "--test"], true],
    [["node", "--test", "**"], ["node", "--test", "a.test.js", "b.test.js"], true],
    [["node", "--test", "**"], ["node", "a.test.js"], false],
    [["git", "diff", "*"], ["git", "diff", "HEAD~1"], true],
    [["git", "diff", "*"], ["git", "diff"], false],
    [["git", "diff", "*"], ["git", "diff", "a", "b"], false],
    [["git", "diff", "*"], ["git", "diff", "src/a.ts"], true], // `*` alone takes a path, `/` and all
    [["git", "*", "--stat"], ["git", "show", "--stat"], true],
    [["{npm,pnpm}", "test"], ["pnpm", "test"], true],
    [["{npm,pnpm}", "test"], ["yarn", "test"], false],
    [["npx", "vitest", "run", "test/*.test.ts"], ["npx", "vitest", "run", "test/a.test.ts"], true],
    [["npx", "vitest", "run", "test/*.test.ts"], ["npx", "vitest", "run", "test/x/a.test.ts"], false],
    [["npx", "vitest", "run", "test/**.test.ts"], ["npx", "vitest", "run", "test/x/a.test.ts"], true],
    [["npx", "vitest", "--reporter={dot,verbose}"], ["npx", "vitest", "--reporter=dot"], true],
    [["npx", "vitest", "--reporter={dot,verbose}"], ["npx", "vitest", "--reporter=json"], false],
    [["node", "file?.js"], ["node", "file1.js"], true],
    [["node", "a.b"], ["node", "axb"], false],
    [["echo", "(x)|[y]"], ["echo", "(x)|[y]"], true],
    // Flags are strict: a wildcard takes arguments, never options, unless written as a flag.
    [["node", "--test", "**"], ["node", "--test", "--import=data:text/javascript,1"], false],
    [["node", "--test", "*"], ["node", "--test", "--require"], false],
    [["node", "--test", "**"], ["node", "--test", "-"], true],
    [["node", "--test", "--test-reporter=*", "**"], ["node", "--test", "--test-reporter=tap", "a.test.js"], true],
    [["git", "*", "--stat"], ["git", "--exec-path", "--stat"], false],
  ])("rule %j against %j → %s", (rule, argv, expected) => {
    expect(matchRule(ZAllowRule.parse(rule), argv)).toBe(expected);
  });

  it("finds the first matching rule and formats rules for people", () => {
    expect(findMatchingRule(EXAMPLE, ["git", "diff", "HEAD~1", "src/"])).toEqual(["git", "diff", "**"]);
    expect(findMatchingRule(EXAMPLE, ["git", "diff", "--stat"])).toBeNull(); // a flag the rule does not list
    expect(findMatchingRule(EXAMPLE, ["git", "push"])).toBeNull();
    expect(formatRule(["npx", "vitest", "run", "**"])).toBe("npx vitest run **");
    expect(formatRule(["node", "-e", "a b"])).toBe('node -e "a b"');
    expect(formatRule(["node", ""])).toBe('node ""');
  });

  it("rejects malformed rules with the position of the problem", () => {
    const messages = (rule: unknown) => {
      const result = ZAllowRule.safeParse(rule);
      return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    };
    expect(messages(["git", "**", "diff"])).toEqual(["1: `**` may only be the last token of a rule"]);
    expect(messages(["*", "**"])).toEqual(["0: the program (first token) must be literal or `{a,b}` alternatives"]);
    expect(messages(["node", "{a,b"])).toEqual(["1: `{` without a matching `}`"]);
    expect(messages(["node", "{a,{b}}"])).toEqual(["1: nested `{` alternatives are not supported"]);
    expect(messages([])).toHaveLength(1);
    expect(messages(["node", ""])).toHaveLength(1);
    expect(ZAllowlist.safeParse(EXAMPLE).success).toBe(true);
  });
});

describe("in-token globs", () => {
  // Each glob is compiled once and kept for the life of the module: a fresh module for every
  // case, so a case proves the compiling and not a pattern an earlier case left in the cache.
  const freshMatchToken = async () => {
    vi.resetModules();
    return (await import("../../server/commands/allowlist")).matchToken;
  };

  it.each<[string, string, boolean]>([
    ["test/*.test.ts", "test/a.test.ts", true],
    ["test/*.test.ts", "test/x/a.test.ts", false],
    ["test/**.test.ts", "test/x/a.test.ts", true],
    ["test/**.test.ts", "test/x/atest.ts", false],
    ["file?.js", "file\u{1F431}.js", true], // `?` is one character, even outside the BMP
    ["file?.js", "file.js", false],
  ])("%j against %j → %s, compiled afresh", async (token, arg, expected) => {
    const matchToken = await freshMatchToken();
    expect(matchToken(token, arg)).toBe(expected);
  });
});

describe("checkCommand", () => {
  it("allows a command matched by a rule and returns that rule", () => {
    expect(checkCommand(["npx", "vitest", "run", "test/unit"], EXAMPLE)).toEqual({ allowed: true, rule: ["npx", "vitest", "run", "**"] });
  });

  it("refuses a command off the allowlist, naming the closest rules", () => {
    const check = checkCommand(["git", "push", "origin"], EXAMPLE);
    expect(check).toEqual({
      allowed: false,
      code: "not_allowlisted",
      reason: "`git push origin` is not on the project's allowlist; closest rules: `git diff **`",
    });
    const npm = checkCommand(["npm", "run", "lint"], EXAMPLE);
    expect(npm.allowed === false && npm.reason).toBe("`npm run lint` is not on the project's allowlist; closest rules: `npm test`");
  });

  it("names at most three closest rules, those sharing the most leading tokens first, then in the allowlist's order", () => {
    const rules: Allowlist = [
      ["git", "log"],
      ["git", "status"],
      ["git", "diff", "--stat"],
      ["git", "diff", "--cached", "--stat"],
      ["git", "show"],
    ];
    expect(checkCommand(["git", "diff", "HEAD"], rules)).toMatchObject({
      code: "not_allowlisted",
      reason: "`git diff HEAD` is not on the project's allowlist; closest rules: `git diff --stat`, `git diff --cached --stat`, `git log`",
    });
  });

  it("names the first flag a wildcard would have to take, not a flag the rule's own flag token takes", () => {
    expect(checkCommand(["eslint", "--format=json", "--fix"], [["eslint", "--format=*", "*"]])).toEqual({
      allowed: false,
      code: "flag_not_allowed",
      reason:
        "flag `--fix` is not allowed: rule `eslint --format=* *` does not list it, and a wildcard never matches a flag (an allowed command names the flags it may take)",
    });
  });

  it("refuses an unknown program, listing the allowed programs", () => {
    const check = checkCommand(["curl", "http://example.com"], EXAMPLE);
    expect(check).toMatchObject({ allowed: false, code: "not_allowlisted" });
    expect(check.allowed === false && check.reason).toMatch(/no rule starts with `curl` \(allowed programs: node, npm, npx, git\)/);
    expect(checkCommand(["ls"], [])).toMatchObject({
      allowed: false,
      reason: "`ls` is not on the project's allowlist (the allowlist is empty)",
    });
  });

  it("refuses invalid argv and an invalid allowlist instead of guessing", () => {
    expect(checkCommand([], EXAMPLE)).toMatchObject({ allowed: false, code: "invalid_command" });
    expect(checkCommand(["node", "a\0b"], EXAMPLE)).toMatchObject({ allowed: false, code: "invalid_command" });
    const bad = checkCommand(["npm", "test"], [["npm", "**", "test"]]);
    expect(bad).toMatchObject({ allowed: false, code: "invalid_allowlist" });
    expect(bad.allowed === false && bad.reason).toMatch(/\[0\]\[1\]: `\*\*` may only be the last token/);
  });

  it.each<[string[]]>([
    [["npm", "start"]],
    [["npm", "run", "dev"]],
    [["npm", "run", "start"]],
    [["npm", "run", "serve"]],
    [["npm", "run-script", "dev:api"]],
    [["npm", "--prefix", "web", "run", "dev"]],
    [["pnpm", "dev"]],
    [["yarn", "start"]],
    [["next", "dev"]],
    [["next", "start", "-p", "3000"]],
    [["npx", "next", "dev"]],
    [["npm", "exec", "--", "next", "start"]],
    [["./node_modules/.bin/next", "dev"]],
    [["vite"]],
    [["vite", "--port", "5173"]],
    [["vite", "preview"]],
    [["npx", "--yes", "vite"]],
    [["node", "server.js"]],
    [["node", "--enable-source-maps", "dist/api-server.mjs"]],
    [["node", "-r", "dotenv/config", "src/server.ts"]],
    [["tsx", "server.ts"]],
    [["env", "PORT=3000", "node", "server.js"]],
    [["python", "server.py"]],
    [["python3", "-m", "http.server", "8000"]],
    [["python", "-m", "flask", "run"]],
    [["python", "manage.py", "runserver"]],
    [["flask", "run"]],
    [["uvicorn", "app:app"]],
    [["gunicorn", "app:app"]],
    [["rails", "s"]],
    [["bundle", "exec", "rails", "server"]],
    [["docker", "compose", "up"]],
    [["docker", "compose", "-f", "x.yml", "up", "-d"]],
    [["docker-compose", "up"]],
    [["tail", "-f", "log.txt"]],
    [["tail", "-n", "20", "--follow", "log.txt"]],
    [["watch", "ls"]],
    [["npx", "vitest", "--watch"]],
    [["npx", "vitest", "watch"]],
    [["npx", "jest", "--watchAll"]],
    [["node", "--watch", "test.js"]],
    [["tsc", "-w"]],
    [["nodemon", "index.js"]],
    [["npx", "http-server"]],
    [["php", "-S", "localhost:8000"]],
  ])("refuses the long-running %j even when allowlisted", (argv) => {
    const check = checkCommand(argv, [argv]);
    expect(check).toMatchObject({ allowed: false, code: "long_running" });
    expect(check.allowed === false && check.reason).toMatch(/refused even when allowlisted/);
  });

  it("names what makes a command long-running", () => {
    const reason = (argv: string[]) => {
      const check = checkCommand(argv, [argv]);
      return check.allowed ? null : check.reason;
    };
    expect(reason(["npm", "start"])).toMatch(/^`npm start` starts a long-running server/);
    expect(reason(["npm", "run", "dev"])).toMatch(/^the `dev` script conventionally starts a server/);
    expect(reason(["vite"])).toMatch(/^`vite` starts a dev server \(only `vite build` finishes\)/);
    expect(reason(["node", "server.js"])).toMatch(/^`node server.js` runs a server script/);
    expect(reason(["python", "-m", "http.server"])).toMatch(/^`python -m http.server` starts a server/);
    expect(reason(["npx", "vitest", "--watch"])).toMatch(/^`--watch` keeps the command running/);
  });

  it.each<[string[]]>([
    [["npm", "test"]],
    [["npm", "run", "build"]],
    [["npm", "run", "test:unit"]],
    [["npm", "run", "lint"]],
    [["pnpm", "test"]],
    [["next", "build"]],
    [["vite", "build"]],
    [["npx", "vite", "build", "--mode", "production"]],
    [["npx", "vitest", "run"]],
    [["node", "--test"]],
    [["node", "--test", "test/server.test.js"]],
    [["node", "test/server.test.js"]],
    [["node", "-e", "require('./server.js')"]],
    [["node", "scripts/build.js"]],
    [["python", "-m", "pytest", "tests/test_server.py"]],
    [["python", "test_server.py"]],
    [["tail", "-n", "20", "log.txt"]],
    [["docker", "compose", "build"]],
    [["git", "diff", "--stat"]],
    [["flask", "routes"]],
    [["rails", "test"]],
  ])("does not mistake %j for a server", (argv) => {
    expect(checkCommand(argv, [argv])).toEqual({ allowed: true, rule: argv });
  });

  it.each<[string[], string]>([
    [["git", "diff", "../other-repo"], "argument `../other-repo` uses `..` to leave the workspace"],
    [["git", "diff", "src/../../secret"], "argument `src/../../secret` uses `..` to leave the workspace"],
    [["git", "diff", "--output=../out.txt"], "argument `--output=../out.txt` uses `..` to leave the workspace"],
    [["git", "diff", "/etc/passwd"], "argument `/etc/passwd` is an absolute path outside the workspace"],
    [["git", "diff", "--no-index", "file:///etc/shadow"], "argument `file:///etc/shadow` is an absolute path outside the workspace"],
    [["git", "diff", "/work/ws-other/file"], "argument `/work/ws-other/file` is an absolute path outside the workspace"],
    [["git", "diff", "/work/ws/../ws-other"], "argument `/work/ws/../ws-other` is an absolute path outside the workspace"],
  ])("refuses the path escape in %j", (argv, reason) => {
    expect(checkCommand(argv, EXAMPLE, { workspace: "/work/ws" })).toEqual({ allowed: false, code: "path_escape", reason });
  });

  it("allows paths that stay inside the workspace", () => {
    for (const argv of [
      ["git", "diff", "src/../test/a.ts"],
      ["git", "diff", "/work/ws/src/a.ts"],
      ["git", "diff", "/work/ws"],
      ["git", "diff", "a..b"],
      ["git", "diff", "HEAD~1..HEAD"],
      ["git", "diff", "..."],
    ]) {
      expect(checkCommand(argv, EXAMPLE, { workspace: "/work/ws" }), argv.join(" ")).toMatchObject({ allowed: true });
    }
  });

  // What `node --test **` must not let through: code loaded from a data URL
  // or a file, a loader, a reporter that runs code or overwrites a source file.
  it.each<[string[], string]>([
    [["node", "--test", "--import=data:text/javascript,process.exit(0)"], "--import=data:text/javascript,process.exit(0)"],
    [["node", "--test", "--require", "./evil.js"], "--require"],
    [["node", "--test", "--experimental-loader", "./loader.mjs", "test/"], "--experimental-loader"],
    [["node", "--test", "--test-reporter=data:text/javascript,x"], "--test-reporter=data:text/javascript,x"],
    [["node", "--test", "--test-reporter-destination", "src/x.js"], "--test-reporter-destination"],
    [["node", "--test", "test/", "--inspect"], "--inspect"],
  ])("refuses %j naming the flag the rule does not list", (argv, flag) => {
    const check = checkCommand(argv, EXAMPLE, { workspace: "/work/ws" });
    expect(check).toMatchObject({ allowed: false, code: "flag_not_allowed" });
    expect(check.allowed ? "" : check.reason).toContain(`flag \`${flag}\` is not allowed: rule \`node --test **\` does not list it`);
  });

  it("still runs the forms the rule names, and flags a rule lists", () => {
    for (const argv of [
      ["node", "--test"],
      ["node", "--test", "test/"],
      ["node", "--test", "test/a.test.js", "test/b.test.js"],
    ]) {
      expect(checkCommand(argv, EXAMPLE, { workspace: "/work/ws" }), argv.join(" ")).toEqual({
        allowed: true,
        rule: ["node", "--test", "**"],
      });
    }
    const withReporter: Allowlist = [["node", "--test", "--test-reporter={spec,tap}", "**"]];
    expect(checkCommand(["node", "--test", "--test-reporter=tap", "test/"], withReporter)).toMatchObject({ allowed: true });
    expect(checkCommand(["node", "--test", "--test-reporter=data:x", "test/"], withReporter)).toMatchObject({ allowed: false });
  });

  it("refuses a path that leaves the workspace through a symbolic link, the link's target resolved", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-allow-")));
    try {
      const ws = path.join(root, "ws");
      fs.mkdirSync(path.join(ws, "test"), { recursive: true });
      fs.mkdirSync(path.join(root, "outside"));
      fs.symlinkSync(path.join(root, "outside"), path.join(ws, "test", "escape"));
      fs.symlinkSync(path.join(ws, "test"), path.join(ws, "inner"));
      for (const arg of ["test/escape", "test/escape/evil.test.js", `${ws}/test/escape/x`]) {
        expect(checkCommand(["node", "--test", arg], EXAMPLE, { workspace: ws })).toEqual({
          allowed: false,
          code: "path_escape",
          reason: `argument \`${arg}\` leads outside the workspace through a symbolic link`,
        });
      }
      // A link that stays inside, and paths that do not exist yet, are fine.
      expect(checkCommand(["node", "--test", "inner/a.test.js"], EXAMPLE, { workspace: ws })).toMatchObject({ allowed: true });
      expect(checkCommand(["node", "--test", "test/new/a.test.js"], EXAMPLE, { workspace: ws })).toMatchObject({ allowed: true });
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("refuses every absolute path when no workspace is known", () => {
    expect(checkCommand(["git", "diff", "/work/ws/a.ts"], EXAMPLE)).toEqual({
      allowed: false,
      code: "path_escape",
      reason: "argument `/work/ws/a.ts` is an absolute path; use a path relative to the workspace",
    });
  });
});

// Mutation testing (docs/testing.md) found these edges unchecked.
describe("refusal messages and path edges", () => {
  it("quotes arguments a person could not retype and shortens long commands", () => {
    expect(formatArgv(["node", "-e", "a b", "", "$x", "plain"])).toBe('node -e "a b" "" "$x" plain');
    expect(formatArgv(["abcde"], 5)).toBe("abcde");
    expect(formatArgv(["abcdef"], 5)).toBe("abcd…");
  });

  it.each<[string, string]>([
    ["it's", `"it's"`],
    ['say "hi"', '"say \\"hi\\""'],
    ["a\\b", '"a\\\\b"'],
    ["$HOME", '"$HOME"'],
    ["`id`", '"`id`"'],
    ["a\tb", '"a\\tb"'],
    ["a\nb", '"a\\nb"'],
    ["--out=dist/a:b,c", "--out=dist/a:b,c"],
  ])("shows the argument %j as %s: quoted only when a shell would change it", (arg, shown) => {
    expect(formatArgv(["echo", arg])).toBe(`echo ${shown}`);
  });

  it("names each allowed program once, in the allowlist's order", () => {
    const rules: Allowlist = [
      ["git", "diff"],
      ["npm", "test"],
      ["git", "log"],
    ];
    expect(checkCommand(["curl", "x"], rules)).toMatchObject({
      reason: "`curl x` is not on the project's allowlist; no rule starts with `curl` (allowed programs: git, npm)",
    });
  });

  it("lists every problem of an invalid argv", () => {
    expect(checkCommand(["node", "a\0b", "c\0d"], EXAMPLE)).toEqual({
      allowed: false,
      code: "invalid_command",
      reason: "invalid argv: arguments may not contain NUL bytes; arguments may not contain NUL bytes",
    });
  });

  it("lists every closest rule and every problem of argv and allowlist", () => {
    const rules: Allowlist = [
      ["git", "diff", "**"],
      ["git", "log"],
    ];
    expect(checkCommand(["git", "push"], rules)).toMatchObject({
      reason: "`git push` is not on the project's allowlist; closest rules: `git diff **`, `git log`",
    });
    expect(checkCommand(["node", "a\0b"], rules)).toMatchObject({ reason: "invalid argv: arguments may not contain NUL bytes" });
    expect(
      checkCommand(
        ["npm", "test"],
        [
          ["npm", "**", "test"],
          ["node", "a}"],
        ],
      ),
    ).toMatchObject({
      reason: "the project's allowlist is invalid: [0][1]: `**` may only be the last token of a rule; [1][1]: `}` without a matching `{`",
    });
  });

  it("refuses the workspace's parent and a bare `..`, allows the program's own absolute path and `name=/abs` values", () => {
    expect(pathEscapeReason(["git", "diff", "/work"], "/work/ws")).toBe("argument `/work` is an absolute path outside the workspace");
    expect(pathEscapeReason(["git", "diff", ".."], "/work/ws")).toBe("argument `..` uses `..` to leave the workspace");
    expect(pathEscapeReason(["git", "diff", "-=/etc/passwd"], "/work/ws")).toBe(
      "argument `-=/etc/passwd` is an absolute path outside the workspace",
    );
    expect(pathEscapeReason(["/usr/bin/git", "diff"], "/work/ws")).toBeNull();
    expect(pathEscapeReason(["git", "diff", "name=/etc/passwd"], "/work/ws")).toBeNull();
  });
});
