// A typed tRPC client for a Cat Cafe server: queries and mutations over HTTP, subscriptions
// over server-sent events (the `eventsource` package, so Node can send the token as a
// header, which a browser EventSource cannot). A dropped subscription is retried with
// backoff for a while and resumes after the last event it got (tRPC sends `lastEventId`);
// an authorization, not-found or input error is final. Each mutation carries an
// `Idempotency-Key` of its own and is sent again, with that key, when the network fails or the
// server answers 503 (./retry.ts): it is carried out once. No transformer: plain JSON.
import { createTRPCClient, httpLink, httpSubscriptionLink, retryLink, splitLink, type TRPCClient } from "@trpc/client";
import { EventSource } from "eventsource";
import type { AppRouter } from "./types";
import { retrying } from "./retry";
import { normalizeServerUrl } from "./url";

export interface CatCafeClientOptions {
  /** The server, e.g. `http://localhost:3000`. */
  url: string;
  /** A personal API token (`cc_…`), sent as `Authorization: Bearer`. */
  token?: string;
  /** Or a `Cookie` header with a signed-in browser session (only `tokens.create` needs one). */
  cookie?: string;
  /** Another fetch (tests, proxies); global fetch by default. */
  fetch?: typeof fetch;
}

export type CatCafeClient = TRPCClient<AppRouter>;

/** Errors a retry cannot fix. */
const FINAL_CODES = new Set(["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST"]);
const SUBSCRIPTION_RETRIES = 8;

function errorCode(error: unknown): string | null {
  const code = (error as { data?: { code?: unknown } | null }).data?.code;
  return typeof code === "string" ? code : null;
}

/** The headers that say who is calling. */
export function authHeaders(options: Pick<CatCafeClientOptions, "token" | "cookie">): Record<string, string> {
  if (options.token && options.cookie)
    throw new Error("give a token or a cookie, not both (a request with a token is judged by the token alone)");
  if (options.token) return { authorization: `Bearer ${options.token}` };
  if (options.cookie) return { cookie: options.cookie };
  return {};
}

export function createCatCafeClient(options: CatCafeClientOptions): CatCafeClient {
  const url = `${normalizeServerUrl(options.url)}/api/trpc`;
  const headers = authHeaders(options);
  const fetchImpl = retrying(options.fetch ?? globalThis.fetch);
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: [
          retryLink({
            retry: ({ error, attempts }) => attempts <= SUBSCRIPTION_RETRIES && !FINAL_CODES.has(errorCode(error) ?? ""),
            retryDelayMs: (attempt) => Math.min(500 * 2 ** attempt, 15_000),
          }),
          httpSubscriptionLink({
            url,
            EventSource,
            eventSourceOptions: {
              fetch: (input, init) => fetchImpl(input, { ...init, headers: { ...init.headers, ...headers } }),
            },
          }),
        ],
        false: httpLink({ url, headers, fetch: fetchImpl }),
      }),
    ],
  });
}
