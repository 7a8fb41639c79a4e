// A fetch that tries again when the server answers 503 (its database unreachable or its
// connection pool busy): the server did nothing with such a request, so repeating it, even a
// mutation, is safe. Waits the server's Retry-After (capped), a few times, then returns the
// last 503 for the caller to report.
export interface RetryUnavailableOptions {
  /** Tries after the first (default 4). */
  retries?: number;
  /** Longest wait between tries, whatever Retry-After says (default 10 s). */
  maxDelayMs?: number;
}

function retryAfterMs(response: Response, attempt: number): number {
  const header = Number(response.headers.get("retry-after"));
  return Number.isFinite(header) && header >= 0 ? header * 1000 : 500 * 2 ** attempt;
}

export function retryUnavailable(fetchImpl: typeof fetch, options: RetryUnavailableOptions = {}): typeof fetch {
  const retries = options.retries ?? 4;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  return async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(input, init);
      if (response.status !== 503 || attempt >= retries || init?.signal?.aborted) return response;
      await response.body?.cancel().catch(() => {});
      await new Promise((r) => setTimeout(r, Math.min(retryAfterMs(response, attempt), maxDelayMs)));
    }
  };
}
