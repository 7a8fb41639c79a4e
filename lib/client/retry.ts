// A fetch that tries again when the server answers 503 (its database unreachable or its
// connection pool busy): the server did nothing with such a request, so repeating it, even a
// mutation, is safe. Waits at least the server's Retry-After, doubling per try, with jitter
// (so that a hundred clients turned away together do not all come back together), capped;
// after the last try the 503 goes to the caller to report.
export interface RetryUnavailableOptions {
  /** Tries after the first (default 6). */
  retries?: number;
  /** Longest wait between tries, whatever Retry-After says (default 10 s). */
  maxDelayMs?: number;
}

function retryDelayMs(response: Response, attempt: number, maxDelayMs: number): number {
  const header = Number(response.headers.get("retry-after"));
  const floor = Number.isFinite(header) && header >= 0 ? header * 1000 : 500;
  const backoff = Math.min(Math.max(floor, 500 * 2 ** attempt), maxDelayMs);
  return Math.round(backoff * (0.5 + Math.random()));
}

export function retryUnavailable(fetchImpl: typeof fetch, options: RetryUnavailableOptions = {}): typeof fetch {
  const retries = options.retries ?? 6;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  return async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(input, init);
      if (response.status !== 503 || attempt >= retries || init?.signal?.aborted) return response;
      await response.body?.cancel().catch(() => {});
      await new Promise((r) => setTimeout(r, retryDelayMs(response, attempt, maxDelayMs)));
    }
  };
}
