// `catcafe token create | list | revoke` (also `catcafe tokens ...`): personal API tokens
// (req U3), with an expiry; `list --all` shows everyone's to an admin. A token is created
// by a signed-in session only (a token cannot mint tokens), so `create` signs in with
// email and password; the token is printed once and never again.
import type { Command } from "commander";
import type { RouterOutputs } from "../../lib/client";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { shortTime, table } from "../output";
import { mintToken } from "./auth";
import { examples } from "./help";

type TokenItem = RouterOutputs["tokens"]["list"][number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A token id, or a prefix as `token list` shows it (`cc_AbCdEfGh`). */
async function resolveTokenId(ctx: CliContext, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  const matches = (await ctx.client().tokens.list.query()).filter((t) => t.prefix === ref || (ref.length >= 6 && t.prefix.startsWith(ref)));
  if (matches.length === 1) return matches[0]!.id;
  if (!matches.length)
    throw new CliError(`none of your tokens has the id or prefix ${ref} (see \`catcafe token list\`)`, { code: "NOT_FOUND" });
  throw new CliError(`${matches.length} of your tokens start with ${ref}: give the id`, { code: "AMBIGUOUS" });
}

function tokenRows(tokens: TokenItem[]): string[] {
  return table(
    ["ID", "PREFIX", "NAME", "CREATED", "LAST USED", "EXPIRES", "REVOKED"],
    tokens.map((t) => [
      t.id,
      `${t.prefix}…`,
      t.name,
      shortTime(t.createdAt),
      shortTime(t.lastUsedAt),
      shortTime(t.expiresAt),
      shortTime(t.revokedAt),
    ]),
  );
}

export function registerTokenCommands(program: Command): void {
  const token = program.command("token").alias("tokens").description("personal API tokens: create, list, revoke");

  token
    .command("create")
    .description("sign in with email + password and create an API token (printed once)")
    .option("--name <name>", "what the token is for (default: catcafe CLI on <host> (<date>))")
    .option("--email <email>", "your email (default: the signed-in user's)")
    .option("--password-stdin", "read the password from stdin")
    .option("--expires-days <n>", "days until the token stops working, 1 to 365 (default: it does not expire)")
    .addHelpText(
      "after",
      examples([
        'catcafe token create --name "nightly CI" --expires-days 90',
        'echo "$PASSWORD" | catcafe token create --name ci --email me@example.com --password-stdin --json',
      ]),
    )
    .action(async (options: { name?: string; email?: string; passwordStdin?: boolean; expiresDays?: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const email = options.email ?? ctx.config()?.user?.email;
      const expiresInDays = options.expiresDays === undefined ? undefined : Number(options.expiresDays);
      if (expiresInDays !== undefined && !Number.isInteger(expiresInDays))
        throw new CliError(`--expires-days takes a whole number of days, not ${options.expiresDays}`, { code: "USAGE" });
      const created = await mintToken(ctx, { ...options, ...(email ? { email } : {}), ...(expiresInDays ? { expiresInDays } : {}) });
      ctx.out.result(created, () => [
        `Created token "${created.name}" (${created.id}). It is shown only now; store it somewhere safe:`,
        created.token,
      ]);
    });

  token
    .command("list")
    .description("your tokens, with when each was last used and expires (--all: everyone's, admin)")
    .option("--all", "everyone's tokens, with their owner (admin)")
    .addHelpText("after", examples(["catcafe token list", "catcafe tokens list --all --json"]))
    .action(async (options: { all?: boolean }, command: Command) => {
      const ctx = CliContext.of(command);
      if (options.all) {
        const all = await ctx.client().tokens.listAll.query();
        ctx.out.result(all, () =>
          all.length
            ? table(
                ["ID", "OWNER", "PREFIX", "NAME", "CREATED", "LAST USED", "EXPIRES", "REVOKED"],
                all.map((t) => [
                  t.id,
                  t.ownerName,
                  `${t.prefix}…`,
                  t.name,
                  shortTime(t.createdAt),
                  shortTime(t.lastUsedAt),
                  shortTime(t.expiresAt),
                  shortTime(t.revokedAt),
                ]),
              )
            : "No tokens.",
        );
        return;
      }
      const tokens = await ctx.client().tokens.list.query();
      ctx.out.result(tokens, () => (tokens.length ? tokenRows(tokens) : "No tokens."));
    });

  token
    .command("revoke")
    .description("revoke a token at once (yours; an admin may revoke anyone's)")
    .argument("<token>", "the token's id, or its prefix as `token list` shows it")
    .addHelpText(
      "after",
      examples(["catcafe token revoke cc_AbCdEfGh", "catcafe token revoke 3f1c2a4e-7b8d-4e2f-9a6b-1c2d3e4f5a6b --json"]),
    )
    .action(async (ref: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const revoked = await ctx.client().tokens.revoke.mutate({ id: await resolveTokenId(ctx, ref) });
      ctx.out.result(revoked, () => `Revoked ${revoked.prefix}… ("${revoked.name}") at ${shortTime(revoked.revokedAt)}.`);
    });
}
