// Access at start (`npm start`): the admin named by ADMIN_EMAIL / ADMIN_PASSWORD is created
// or updated; otherwise, while no user exists, a one-time setup link is made. Runs in the
// start script, outside Next.js, on its own short-lived connection.
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../db/generated/client";
import { createPool } from "../db/pool";
import { parseEnv } from "../env";
import { ZAdminEnv } from "./env";
import { createSetupToken } from "./setup";
import { countUsers, upsertAdmin } from "./users";

export type BootstrapResult =
  { kind: "admin"; email: string; created: boolean } | { kind: "setup"; url: string; expiresAt: Date } | { kind: "ready"; users: number };

export async function bootstrapAccess(
  databaseUrl: string,
  appUrl: string,
  env: Record<string, string | undefined> = process.env,
): Promise<BootstrapResult> {
  const admin = parseEnv(ZAdminEnv, env);
  const pool = createPool(databaseUrl, 2, { applicationName: "catcafe-start" });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  try {
    if (admin.ADMIN_EMAIL && admin.ADMIN_PASSWORD !== undefined) {
      const { user, created } = await upsertAdmin(prisma, {
        email: admin.ADMIN_EMAIL,
        password: admin.ADMIN_PASSWORD,
        name: admin.ADMIN_NAME,
      });
      return { kind: "admin", email: user.email, created };
    }
    const users = await countUsers(prisma);
    if (users > 0) return { kind: "ready", users };
    const { token, expiresAt } = await createSetupToken(prisma);
    const url = new URL("/setup", appUrl);
    url.searchParams.set("token", token);
    return { kind: "setup", url: url.toString(), expiresAt };
  } finally {
    await prisma.$disconnect();
    await pool.end();
  }
}
