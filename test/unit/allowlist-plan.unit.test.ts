import { describe, expect, it } from "vitest";
import { planCommand, ZCommandSpec } from "../../server/commands/plan";

describe("planCommand", () => {
  it.each<[string, string[]]>([
    ["npm test", ["npm", "test"]],
    ["  npx   vitest\trun  ", ["npx", "vitest", "run"]],
    [`node --test 'test/a b.test.js'`, ["node", "--test", "test/a b.test.js"]],
    [`node -e "console.log('hi there')"`, ["node", "-e", "console.log('hi there')"]],
    [`echo "a \\"quoted\\" word" 'single "inner"'`, ["echo", 'a "quoted" word', 'single "inner"']],
    [`echo "back\\\\slash" "keep \\n"`, ["echo", "back\\slash", "keep \\n"]],
    [`echo a\\ b`, ["echo", "a b"]],
    [`echo pre'mid'"post"`, ["echo", "premidpost"]],
    [`echo '' ""`, ["echo", "", ""]],
    [`npx vitest run '*.test.ts'`, ["npx", "vitest", "run", "*.test.ts"]],
    [`npx vitest run "test/{a,b}.ts" \\*`, ["npx", "vitest", "run", "test/{a,b}.ts", "*"]],
    [`echo '$HOME' '|' ';' '&&' '>' '\`x\`'`, ["echo", "$HOME", "|", ";", "&&", ">", "`x`"]],
    [`git diff HEAD~1 a=b --x=y#z`, ["git", "diff", "HEAD~1", "a=b", "--x=y#z"]],
    [`node {} x,y`, ["node", "{}", "x,y"]],
    [`"FOO=1" node`, ["FOO=1", "node"]],
  ])("splits %s without a shell", (input, argv) => {
    expect(planCommand(input)).toEqual({ ok: true, argv });
  });

  it.each<[string, RegExp]>([
    ["npm test | tee out", /a pipe `\|`/],
    ["npm test && rm -rf .", /a command list `&&`/],
    ["npm test || true", /a command list `\|\|`/],
    ["npm test; rm -rf .", /a command separator `;`/],
    ["npm test & echo", /a control operator `&`/],
    ["npm test > out.txt", /a redirection `>`/],
    ["npm test 2>&1", /a redirection `>`/],
    ["node < input", /a redirection `<`/],
    ["(npm test)", /a subshell `\(`/],
    ["npm test\nrm -rf .", /a newline/],
    ["echo `whoami`", /command substitution with backticks/],
    ['echo "`whoami`"', /command substitution with backticks/],
    ["echo $(whoami)", /command substitution `\$\(\.\.\.\)`/],
    ['echo "$(whoami)"', /command substitution `\$\(\.\.\.\)`/],
    ["echo $HOME", /variable expansion `\$HOME`/],
    ['echo "$DATABASE_URL"', /variable expansion `\$DATABASE_URL`/],
    ["echo ${HOME}", /parameter expansion `\$\{\.\.\.\}`/],
    ["echo $'x'", /ANSI-C quoting/],
    ["node --test *.test.js", /a glob `\*\.test\.js` \(quote it/],
    ["node --test test/?.js", /a glob `test\/\?\.js`/],
    ["ls [ab].js", /a glob `\[ab\]\.js`/],
    ["echo test/{a,b}.js", /brace expansion `test\/\{a,b\}\.js`/],
    ["echo {1..3}", /brace expansion/],
    ["cat ~/.ssh/id_rsa", /tilde expansion in `~\/\.ssh\/id_rsa`/],
    ["npm test # comment", /a comment `#`/],
    ["FOO=1 npm test", /an environment assignment `FOO=1`/],
    ["echo 'unterminated", /an unterminated single quote/],
    ['echo "unterminated', /an unterminated double quote/],
    ["echo trailing\\", /a trailing backslash/],
  ])("refuses %j with a specific reason", (input, reason) => {
    const plan = planCommand(input);
    expect(plan.ok).toBe(false);
    expect(!plan.ok && plan.reason).toMatch(reason);
    expect(!plan.ok && plan.reason).toMatch(/no shell runs it/);
  });

  it("refuses empty and oversized commands", () => {
    expect(planCommand("   ")).toEqual({ ok: false, reason: "the command is empty" });
    expect(planCommand("x".repeat(8_001))).toMatchObject({ ok: false, reason: "the command is longer than 8000 characters" });
  });

  it("takes argv arrays as they are (no shell will see them) but validates them", () => {
    expect(planCommand(["node", "-e", "console.log($HOME | 1)", "*.js"])).toEqual({
      ok: true,
      argv: ["node", "-e", "console.log($HOME | 1)", "*.js"],
    });
    expect(planCommand([])).toMatchObject({ ok: false, reason: expect.stringMatching(/^invalid argv/) });
    expect(planCommand(["", "x"])).toMatchObject({ ok: false, reason: "invalid argv: the program name may not be empty" });
    expect(planCommand(["node", "a\0b"])).toMatchObject({ ok: false, reason: "invalid argv: arguments may not contain NUL bytes" });
    expect(planCommand(["node", "a\0b", "c\0d"])).toEqual({
      ok: false,
      reason: "invalid argv: arguments may not contain NUL bytes; arguments may not contain NUL bytes",
    });
  });

  it("splits a string whose words are no valid argv, then names every problem", () => {
    expect(planCommand("node a\0b c\0d")).toEqual({
      ok: false,
      reason: "arguments may not contain NUL bytes; arguments may not contain NUL bytes",
    });
  });

  // Mutation testing (docs/testing.md) found these edges unchecked.
  it("splits the edge cases of escapes, braces and assignments", () => {
    expect(planCommand('echo "\\$HOME \\`x\\`"')).toEqual({ ok: true, argv: ["echo", "$HOME `x`"] });
    expect(planCommand("echo a,b} {a},b {a,'}'")).toEqual({ ok: true, argv: ["echo", "a,b}", "{a},b", "{a,}"] });
    expect(planCommand("x-FOO=1 npm")).toEqual({ ok: true, argv: ["x-FOO=1", "npm"] });
    expect(planCommand("x".repeat(8_000))).toEqual({ ok: true, argv: ["x".repeat(8_000)] });
  });

  it.each<[string, string]>([
    ['echo "a\\\nb"', "a line continuation"],
    ["echo a\\\n", "a line continuation"],
    ["echo $'x' y", "ANSI-C quoting `$'...'`"],
    ["echo $1x", "a `$` expansion"],
  ])("refuses %j as %s", (input, what) => {
    expect(planCommand(input)).toEqual({ ok: false, reason: `${what}; give the command as plain arguments (no shell runs it)` });
  });

  it("ZCommandSpec accepts a string or an argv array, nothing else", () => {
    expect(ZCommandSpec.safeParse("npm test").success).toBe(true);
    expect(ZCommandSpec.safeParse(["npm", "test"]).success).toBe(true);
    expect(ZCommandSpec.safeParse("").success).toBe(false);
    expect(ZCommandSpec.safeParse({ cmd: "npm test" }).success).toBe(false);
    expect(ZCommandSpec.safeParse(["npm", 1]).success).toBe(false);
  });
});
