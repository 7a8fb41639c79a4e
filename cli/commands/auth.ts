// `catcafe login | logout | whoami`. Login either checks and saves a token you already
// have (made in the browser, or by `catcafe token create`), or signs in with email and
// password and mints a token for this machine: a signed-in session is the only thing that
// may create tokens, and the CLI keeps the token, never the password or the session.
import type { Command } from "commander";
import { createCatCafeClient, createTokenWithPassword, defaultTokenName, type CurrentUserInfo } from "../../lib/client";
import { removeConfig, writeConfig } from "../config-file";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { ask, readStdin } from "../prompt";
import { examples } from "./help";

interface LoginOptions {
  token?: string;
  tokenStdin?: boolean;
  email?: string;
  passwordStdin?: boolean;
  name?: string;
}

/** The token's user, or a clear refusal. */
async function whoIs(url: string, token: string): Promise<CurrentUserInfo> {
  const me = await createCatCafeClient({ url, token }).auth.me.query();
  if (!me) throw new CliError(`${url} does not accept this token (unknown, revoked, or its user is disabled)`, { code: "UNAUTHORIZED" });
  return me;
}

/** The password: piped in, from CATCAFE_PASSWORD, or typed at the terminal. */
async function password(options: LoginOptions): Promise<string> {
  if (options.passwordStdin) return readStdin("the password");
  if (process.env.CATCAFE_PASSWORD) return process.env.CATCAFE_PASSWORD;
  return ask("Password: ", {
    secret: true,
    missing: "no password: pipe it with --password-stdin, set CATCAFE_PASSWORD, or run in a terminal",
  });
}

/** Signs in with email + password and creates a token (shared with `token create`). */
export async function mintToken(
  ctx: CliContext,
  options: { email?: string; passwordStdin?: boolean; name?: string; expiresInDays?: number },
) {
  const url = ctx.serverUrl();
  const email = options.email ?? (await ask("Email: ", { missing: "no email: pass --email (or --token to use a token you already have)" }));
  const secret = await password(options);
  ctx.out.progress(`signing in to ${url} as ${email}…`);
  return createTokenWithPassword({
    url,
    email,
    password: secret,
    name: options.name ?? defaultTokenName(),
    ...(options.expiresInDays ? { expiresInDays: options.expiresInDays } : {}),
  });
}

async function login(ctx: CliContext, options: LoginOptions): Promise<void> {
  const url = ctx.serverUrl();
  const previous = ctx.config();
  let token: string;
  let tokenId: string | null = null;
  let createdByLogin = false;
  if (options.token !== undefined || options.tokenStdin) {
    token = options.tokenStdin || options.token === "-" ? await readStdin("the token") : options.token!;
    if (!token.startsWith("cc_"))
      throw new CliError("an API token starts with cc_ (create one in the web app or with `catcafe token create`)");
  } else {
    const created = await mintToken(ctx, options);
    token = created.token;
    tokenId = created.id;
    createdByLogin = true;
  }
  const user = await whoIs(url, token);
  writeConfig(ctx.configFile, {
    version: 1,
    url,
    token,
    tokenId,
    createdByLogin,
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
    savedAt: new Date().toISOString(),
  });
  // A token an earlier `login` minted for this machine is replaced, not left behind.
  let revokedPrevious: string | null = null;
  if (previous?.createdByLogin && previous.tokenId && previous.token !== token && previous.url === url) {
    revokedPrevious = await createCatCafeClient({ url, token: previous.token })
      .tokens.revoke.mutate({ id: previous.tokenId })
      .then((t) => t.prefix)
      .catch(() => null);
  }
  ctx.out.result({ url, user, tokenId, tokenPrefix: token.slice(0, 11), configFile: ctx.configFile, revokedPrevious }, () => [
    `Signed in to ${url} as ${user.email} (${user.role}).`,
    `Token ${token.slice(0, 11)}… saved in ${ctx.configFile} (readable only by you).`,
    ...(revokedPrevious ? [`Revoked the token this machine had before (${revokedPrevious}…).`] : []),
  ]);
}

async function logout(ctx: CliContext, options: { keepToken?: boolean }): Promise<void> {
  const saved = ctx.config();
  let revoked = false;
  if (saved?.createdByLogin && saved.tokenId && !options.keepToken) {
    await createCatCafeClient({ url: saved.url, token: saved.token }).tokens.revoke.mutate({ id: saved.tokenId });
    revoked = true;
  }
  const removed = removeConfig(ctx.configFile);
  ctx.out.result({ removed, revoked, configFile: ctx.configFile }, () =>
    removed ? `Signed out: removed ${ctx.configFile}${revoked ? " and revoked its token" : ""}.` : `Not signed in (no ${ctx.configFile}).`,
  );
}

async function whoami(ctx: CliContext): Promise<void> {
  const { url, token } = ctx.connection();
  const user = await whoIs(url, token);
  ctx.out.result({ url, user }, () => `${user.email} (${user.name}), ${user.role}, on ${url} via ${user.via}`);
}

export function registerAuthCommands(program: Command): void {
  program
    .command("login")
    .description("sign in to a Cat Cafe server and save its URL and an API token (file mode 0600)")
    .option("--token <token>", "use an API token you already have (`-` reads it from stdin)")
    .option("--token-stdin", "read the API token from stdin")
    .option("--email <email>", "sign in with this email (the password is asked, piped, or CATCAFE_PASSWORD)")
    .option("--password-stdin", "read the password from stdin")
    .option("--name <name>", "name of the token to create (default: catcafe CLI on <host> (<date>))")
    .addHelpText(
      "after",
      examples([
        "catcafe login --url http://localhost:3000 --email admin@example.com",
        'echo "$PASSWORD" | catcafe login --url https://cats.example.com --email me@example.com --password-stdin',
        'echo "$CATCAFE_TOKEN" | catcafe login --url https://cats.example.com --token-stdin',
      ]),
    )
    .action(async (options: LoginOptions, command: Command) => login(CliContext.of(command), options));

  program
    .command("logout")
    .description("forget the saved token (and revoke it, if `catcafe login` created it)")
    .option("--keep-token", "do not revoke the token")
    .addHelpText("after", examples(["catcafe logout"]))
    .action(async (options: { keepToken?: boolean }, command: Command) => logout(CliContext.of(command), options));

  program
    .command("whoami")
    .description("who the saved token signs you in as")
    .addHelpText("after", examples(["catcafe whoami", "catcafe whoami --json"]))
    .action(async (_options: unknown, command: Command) => whoami(CliContext.of(command)));
}
