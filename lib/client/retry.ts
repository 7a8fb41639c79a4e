// A fetch that makes a request safe to send again and sends it again when that helps
// (docs/api.md, "Repeating a command"). A POST (a mutation) gets one `Idempotency-Key` of its
// own, kept for every try, so the server carries it out once whatever happens to an answer.
// Then it tries again, waiting at least the server's Retry-After, doubling per try, with
// jitter (so that a hundred clients turned away together do not all come back together),
// capped, when:
// - the network failed (the connection refused, reset, or dropped before the answer came):
//   the server may have carried the command out, and the key makes the retry get that answer;
// - the server answered 503 (its database away or its pool busy: nothing was done), or 409
//   with Retry-After (the same key is still being carried out: its answer comes next time).
// After the last try the failure goes to the caller to report.
export interface RetryOptions {
  /** Tries after the first (default 6). */
  retries?: number;
  /** Longest wait between tries, whatever Retry-After says (default 10 s). */
  maxDelayMs?: number;
}

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

function retryDelayMs(response: Response | null, attempt: number, maxDelayMs: number): number {
  const header = Number(response?.headers.get("retry-after") ?? Number.NaN);
  const floor = Number.isFinite(header) && header >= 0 ? header * 1000 : 500;
  const backoff = Math.min(Math.max(floor, 500 * 2 ** attempt), maxDelayMs);
  return Math.round(backoff * (0.5 + Math.random()));
}

/** Whether an answer says "the same request later will do": 503, or 409 with Retry-After. */
function worthRetrying(response: Response): boolean {
  return response.status === 503 || (response.status === 409 && response.headers.has("retry-after"));
}

/** `init` with an idempotency key when it is a POST without one. */
function withKey(init: RequestInit | undefined): RequestInit | undefined {
  if ((init?.method ?? "GET").toUpperCase() !== "POST") return init;
  const headers = new Headers(init?.headers);
  if (!headers.has(IDEMPOTENCY_HEADER)) headers.set(IDEMPOTENCY_HEADER, crypto.randomUUID());
  return { ...init, headers };
}

export function retrying(fetchImpl: typeof fetch, options: RetryOptions = {}): typeof fetch {
  const retries = options.retries ?? 6;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  return async (input, rawInit) => {
    const init = withKey(rawInit);
    for (let attempt = 0; ; attempt++) {
      let response: Response | null = null;
      try {
        response = await fetchImpl(input, init);
      } catch (err) {
        // An abort is the caller's; a failed network is worth another try (with the same key).
        if (attempt >= retries || init?.signal?.aborted || !(err instanceof TypeError)) throw err;
      }
      if (response && (!worthRetrying(response) || attempt >= retries || init?.signal?.aborted)) return response;
      await response?.body?.cancel().catch(() => {});
      await new Promise((r) => setTimeout(r, retryDelayMs(response, attempt, maxDelayMs)));
    }
  };
}
