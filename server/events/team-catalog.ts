// The team's administration as events (req X2, U2–U4; docs/auth.md, "Audit"): invitations
// made, revoked and accepted, users created, roles changed, users disabled and enabled, API tokens created
// and revoked. All in one stream, `team`, appended in the transaction that makes the change,
// with the person who made it as the actor. Never a token, a token's hash or a password:
// only ids, roles, names and emails.
import { z } from "zod";
import { defineEvent } from "./registry";

/** The stream every team change is recorded in. */
export const TEAM_STREAM = "team";

const ZRole = z.enum(["viewer", "operator", "admin"]);
const ZWhen = z.iso.datetime({ offset: true });

export const teamCatalog = {
  InvitationCreated: defineEvent({
    version: 1,
    schema: z.object({ invitationId: z.uuid(), role: ZRole, email: z.string().nullable(), expiresAt: ZWhen }),
    summary: (d) => `Invitation ${d.invitationId.slice(0, 8)} created: ${d.role}${d.email ? ` for ${d.email}` : ""}, until ${d.expiresAt}`,
  }),
  InvitationRevoked: defineEvent({
    version: 1,
    schema: z.object({ invitationId: z.uuid() }),
    summary: (d) => `Invitation ${d.invitationId.slice(0, 8)} revoked`,
  }),
  /** The actor is the new user: the invitation's link was their credential. */
  InvitationAccepted: defineEvent({
    version: 1,
    schema: z.object({ invitationId: z.uuid(), userId: z.uuid(), email: z.string(), name: z.string(), role: ZRole }),
    summary: (d) => `Invitation ${d.invitationId.slice(0, 8)} accepted by ${d.name} <${d.email}> as ${d.role}`,
  }),
  /** An admin added the user with a password (users.create, `catcafe` scripts). */
  UserCreated: defineEvent({
    version: 1,
    schema: z.object({ userId: z.uuid(), email: z.string(), name: z.string(), role: ZRole }),
    summary: (d) => `User ${d.name} <${d.email}> created as ${d.role}`,
  }),
  UserRoleChanged: defineEvent({
    version: 1,
    schema: z.object({ userId: z.uuid(), from: ZRole.nullable(), to: ZRole }),
    summary: (d) => `Role of user ${d.userId.slice(0, 8)}: ${d.from ?? "none"} → ${d.to}`,
  }),
  UserDisabled: defineEvent({
    version: 1,
    schema: z.object({ userId: z.uuid() }),
    summary: (d) => `User ${d.userId.slice(0, 8)} disabled`,
  }),
  UserEnabled: defineEvent({
    version: 1,
    schema: z.object({ userId: z.uuid() }),
    summary: (d) => `User ${d.userId.slice(0, 8)} enabled`,
  }),
  ApiTokenCreated: defineEvent({
    version: 1,
    schema: z.object({ tokenId: z.uuid(), ownerId: z.uuid(), name: z.string(), expiresAt: ZWhen.nullable() }),
    summary: (d) => `API token "${d.name}" (${d.tokenId.slice(0, 8)}) created${d.expiresAt ? `, until ${d.expiresAt}` : ""}`,
  }),
  ApiTokenRevoked: defineEvent({
    version: 1,
    schema: z.object({ tokenId: z.uuid(), ownerId: z.uuid() }),
    summary: (d) => `API token ${d.tokenId.slice(0, 8)} revoked`,
  }),
} as const;
