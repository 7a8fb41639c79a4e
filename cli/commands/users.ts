// `catcafe users list | invite | role | disable | enable | invitations | revoke-invitation`:
// the team's people (req X2, admin). A user is named by email or id; an invitation's link is
// printed once, on the server's URL as this CLI uses it.
import type { Command } from "commander";
import type { RouterOutputs } from "../../lib/client";
import { ROLES, type Role } from "../../lib/roles";
import { CliContext } from "../context";
import { CliError } from "../errors";
import { shortTime, table } from "../output";
import { examples } from "./help";

type UserItem = RouterOutputs["users"]["list"][number];
type InvitationItem = RouterOutputs["invitations"]["list"][number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseRole(value: string): Role {
  const role = value.trim().toLowerCase();
  if (!(ROLES as readonly string[]).includes(role))
    throw new CliError(`the role is one of ${ROLES.join(", ")}, not ${value}`, { code: "USAGE" });
  return role as Role;
}

/** A user by id or by email (any case). */
async function resolveUser(ctx: CliContext, ref: string): Promise<UserItem> {
  const users = await ctx.client().users.list.query();
  const wanted = ref.trim().toLowerCase();
  const found = users.find((u) => (UUID.test(wanted) ? u.id === wanted : u.email === wanted));
  if (!found)
    throw new CliError(`no user with the ${UUID.test(wanted) ? "id" : "email"} ${ref} (see \`catcafe users list\`)`, { code: "NOT_FOUND" });
  return found;
}

function userRows(users: UserItem[]): string[] {
  return table(
    ["ID", "NAME", "EMAIL", "ROLE", "LAST SIGN-IN", "STATUS"],
    users.map((u) => [u.id, u.name, u.email, u.role, shortTime(u.lastSignInAt), u.disabledAt ? "disabled" : "active"]),
  );
}

function invitationRows(invitations: InvitationItem[]): string[] {
  return table(
    ["ID", "ROLE", "EMAIL", "INVITED BY", "EXPIRES"],
    invitations.map((i) => [i.id, i.role, i.email ?? "(anyone with the link)", i.invitedByName, shortTime(i.expiresAt)]),
  );
}

export function registerUserCommands(program: Command): void {
  const users = program.command("users").description("the team's people, roles and invitations (admin)");

  users
    .command("list")
    .description("every user: name, email, role, last sign-in, status")
    .addHelpText("after", examples(["catcafe users list", "catcafe users list --json"]))
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const list = await ctx.client().users.list.query();
      ctx.out.result(list, () => (list.length ? userRows(list) : "No users."));
    });

  users
    .command("invite")
    .description("create a one-time invitation link with a role (printed once)")
    .requiredOption("--role <role>", `the role the new user gets: ${ROLES.join(", ")}`)
    .option("--email <email>", "the email the account must use (default: anyone with the link)")
    .option("--expires-days <n>", "days the link works, 1 to 30", "7")
    .addHelpText(
      "after",
      examples([
        "catcafe users invite --role operator --email ada@example.com",
        "catcafe users invite --role viewer --expires-days 2 --json",
      ]),
    )
    .action(async (options: { role: string; email?: string; expiresDays: string }, command: Command) => {
      const ctx = CliContext.of(command);
      const days = Number(options.expiresDays);
      if (!Number.isInteger(days))
        throw new CliError(`--expires-days takes a whole number of days, not ${options.expiresDays}`, { code: "USAGE" });
      const created = await ctx.client().invitations.create.mutate({
        role: parseRole(options.role),
        expiresInDays: days,
        ...(options.email ? { email: options.email } : {}),
      });
      const link = new URL(created.path, ctx.serverUrl()).toString();
      ctx.out.result({ ...created, link }, () => [
        `Invitation ${created.id}: ${created.role}${created.email ? ` for ${created.email}` : ""}, until ${shortTime(created.expiresAt)}.`,
        "The link is shown only now and works once; send it to the person you invite:",
        link,
      ]);
    });

  users
    .command("role")
    .description("give a user a role")
    .argument("<user>", "the user's email or id")
    .argument("<role>", ROLES.join(" | "))
    .addHelpText("after", examples(["catcafe users role ada@example.com operator"]))
    .action(async (ref: string, role: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const user = await resolveUser(ctx, ref);
      const changed = await ctx.client().users.setRole.mutate({ userId: user.id, role: parseRole(role) });
      ctx.out.result(
        changed,
        () => `${changed.name} <${changed.email}> is ${changed.role}${user.role === changed.role ? " (already)" : ""}.`,
      );
    });

  for (const [name, disabled] of [
    ["disable", true],
    ["enable", false],
  ] as const) {
    users
      .command(name)
      .description(disabled ? "disable a user: their sessions and tokens stop working at once" : "enable a disabled user again")
      .argument("<user>", "the user's email or id")
      .addHelpText("after", examples([`catcafe users ${name} ada@example.com`]))
      .action(async (ref: string, _options: unknown, command: Command) => {
        const ctx = CliContext.of(command);
        const user = await resolveUser(ctx, ref);
        const changed = await ctx.client().users.disable.mutate({ userId: user.id, disabled });
        ctx.out.result(changed, () => `${changed.name} <${changed.email}> is ${changed.disabledAt ? "disabled" : "enabled"}.`);
      });
  }

  users
    .command("invitations")
    .description("pending invitations (not used, revoked or expired)")
    .addHelpText("after", examples(["catcafe users invitations", "catcafe users invitations --json"]))
    .action(async (_options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      const list = await ctx.client().invitations.list.query();
      ctx.out.result(list, () => (list.length ? invitationRows(list) : "No pending invitations."));
    });

  users
    .command("revoke-invitation")
    .description("revoke a pending invitation: its link stops working")
    .argument("<id>", "the invitation's id (see `catcafe users invitations`)")
    .addHelpText("after", examples(["catcafe users revoke-invitation 3f1c2a4e-7b8d-4e2f-9a6b-1c2d3e4f5a6b"]))
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = CliContext.of(command);
      if (!UUID.test(id))
        throw new CliError(`an invitation id is a UUID (see \`catcafe users invitations\`), not ${id}`, { code: "USAGE" });
      const revoked = await ctx.client().invitations.revoke.mutate({ id });
      ctx.out.result(
        revoked,
        () => `Revoked the invitation ${revoked.id} (${revoked.role}${revoked.email ? ` for ${revoked.email}` : ""}).`,
      );
    });
}
