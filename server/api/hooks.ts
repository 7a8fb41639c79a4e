// The issue trackers' webhook receivers (docs/intake.md): no sign-in, the delivery's signature
// is its credential (server/intake/receive.ts). A defect answers 500 without details (the
// tracker retries it; the replay rule makes a retry safe).
import { logger } from "../log";
import { receiveDelivery } from "../intake/receive";
import type { IntakeProvider } from "../intake/rules";
import { webSettingsPath } from "../config/settings";
import type { ContextSource } from "./context";

export function createHookHandlers(source: () => ContextSource) {
  const handler = (provider: IntakeProvider) => async (request: Request) => {
    const { deps, secret } = source();
    if (!secret)
      return new Response(JSON.stringify({ error: { message: "NEXTAUTH_SECRET is not set: webhook secrets cannot be read" } }), {
        status: 503,
        headers: { "content-type": "application/json" },
      });
    try {
      return await receiveDelivery({ store: deps.store, pool: deps.pool, key: secret, settingsFile: webSettingsPath() }, provider, request);
    } catch (err) {
      logger.error({ err: String(err), provider }, "could not take a webhook delivery");
      return new Response(JSON.stringify({ error: { message: "internal error: the delivery was not taken, retry it" } }), {
        status: 500,
        headers: { "content-type": "application/json" },
      });
    }
  };
  return { github: handler("github"), gitlab: handler("gitlab") };
}
