// A project's webhook secret (docs/intake.md, docs/security.md "Webhook secrets"). Verifying
// GitHub's HMAC or comparing GitLab's token needs the secret itself, so the server keeps it —
// sealed with AES-256-GCM under a key derived from NEXTAUTH_SECRET (HKDF), in
// `intake_secrets`, beside an `IntakeSecretSet` event (set or rotated, by whom: never the
// value) appended in the same transaction. Nothing reads it back out of the server: the UI
// and the CLI see only when and by whom it was set. Rotating NEXTAUTH_SECRET makes the sealed
// secrets unreadable: each project's secret is then set again (deliveries get 401 until then).
import crypto from "node:crypto";
import { z } from "zod";
import { withTransaction, type Db, type Queryable } from "../db/pool";
import { AppError } from "../errors";
import { actorLabel, type Actor } from "../events/catalog";
import { intakeStream } from "../events/intake-catalog";
import type { EventStore } from "../events/store";
import { noteHandedSecret } from "../redact";

export const ZSetSecretInput = z.object({
  projectId: z.string().min(1).max(100),
  secret: z
    .string()
    .min(16, "a webhook secret has at least 16 characters (generate one: openssl rand -hex 32)")
    .max(256, "a webhook secret has at most 256 characters")
    .regex(/^[\x21-\x7e]+$/, "a webhook secret is printable ASCII without spaces"),
});
export type TSetSecretInput = z.input<typeof ZSetSecretInput>;

/** The server's key material (NEXTAUTH_SECRET): each seal derives its key from it. */
export type SealingKey = string;

const VERSION = "v1";

function derivedKey(material: SealingKey): Buffer {
  if (material.length < 8) throw new AppError("PRECONDITION_FAILED", "NEXTAUTH_SECRET is too short to seal webhook secrets");
  return Buffer.from(crypto.hkdfSync("sha256", material, "catcafe", "intake webhook secret", 32));
}

export function sealSecret(secret: string, material: SealingKey): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", derivedKey(material), iv);
  const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64"), cipher.getAuthTag().toString("base64"), sealed.toString("base64")].join(".");
}

/** The secret, or null when it cannot be opened (sealed under another NEXTAUTH_SECRET). */
export function openSecret(sealed: string, material: SealingKey): string | null {
  const [version, iv, tag, data] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || !data) return null;
  try {
    const decipher = crypto.createDecipheriv("aes-256-gcm", derivedKey(material), Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

export interface SecretDeps {
  store: EventStore;
  pool: Db;
  key: SealingKey;
}

/**
 * Sets (or rotates) the project's webhook secret: the sealed value and its event in one
 * transaction. The same secret set again changes nothing and answers the same.
 */
export async function setWebhookSecret(
  deps: SecretDeps,
  raw: TSetSecretInput,
  actor: Actor,
): Promise<{ projectId: string; setAt: string; setBy: string; rotated: boolean }> {
  const parsed = ZSetSecretInput.safeParse(raw);
  if (!parsed.success)
    throw new AppError("INVALID_INPUT", parsed.error.issues.map((i) => i.message).join("; "), {
      fieldErrors: { secret: parsed.error.issues.map((i) => i.message) },
    });
  const { projectId, secret } = parsed.data;
  const exists = await deps.pool.query("SELECT 1 FROM projects WHERE id = $1", [projectId]);
  if (!exists.rowCount) throw new AppError("NOT_FOUND", `no project ${projectId}`);
  const stream = intakeStream(projectId);
  const before = await deps.pool.query<{ sealed: string; set_at: Date; set_by: string }>(
    "SELECT sealed, set_at, set_by FROM intake_secrets WHERE project_id = $1",
    [projectId],
  );
  const old = before.rows[0];
  if (old && openSecret(old.sealed, deps.key) === secret)
    return { projectId, setAt: old.set_at.toISOString(), setBy: old.set_by, rotated: false };
  const version = (await deps.store.streamVersion(stream)) ?? 0;
  const setBy = actorLabel(actor) === "system" ? `system:${actor.id}` : actorLabel(actor);
  return withTransaction(deps.pool, async (tx) => {
    await deps.store.appendInTx(
      tx,
      stream,
      version === 0 ? "no_stream" : version,
      [{ type: "IntakeSecretSet", data: { projectId, rotated: Boolean(old) } }],
      { actor },
      { streamType: "intake" },
    );
    const r = await tx.query<{ set_at: Date }>(
      `INSERT INTO intake_secrets (project_id, sealed, set_at, set_by) VALUES ($1, $2, now(), $3)
       ON CONFLICT (project_id) DO UPDATE SET sealed = EXCLUDED.sealed, set_at = EXCLUDED.set_at, set_by = EXCLUDED.set_by
       RETURNING set_at`,
      [projectId, sealSecret(secret, deps.key), setBy],
    );
    return { projectId, setAt: r.rows[0]!.set_at.toISOString(), setBy, rotated: Boolean(old) };
  });
}

/** Whether the project has a secret, and when and by whom it was set: never the value. */
export async function webhookSecretStatus(db: Queryable, projectId: string): Promise<{ setAt: string; setBy: string } | null> {
  const r = await db.query<{ set_at: Date; set_by: string }>("SELECT set_at, set_by FROM intake_secrets WHERE project_id = $1", [
    projectId,
  ]);
  const row = r.rows[0];
  return row ? { setAt: row.set_at.toISOString(), setBy: row.set_by } : null;
}

/** The secret that verifies the project's deliveries (null: none set, or unreadable); from now on redacted from what this process records. */
export async function webhookSecret(db: Queryable, key: SealingKey, projectId: string): Promise<string | null> {
  const r = await db.query<{ sealed: string }>("SELECT sealed FROM intake_secrets WHERE project_id = $1", [projectId]);
  const sealed = r.rows[0]?.sealed;
  const secret = sealed ? openSecret(sealed, key) : null;
  if (secret) noteHandedSecret("webhook secret", secret);
  return secret;
}
