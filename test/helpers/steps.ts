// A step as a runner hands it to an executor (attempt 1, a lease a minute long), for tests that
// call an executor directly.
import type { ClaimedStep } from "../../server/runner/dispatch";

export function claimedStep(kind: string, input: unknown, overrides: Partial<ClaimedStep> = {}): ClaimedStep {
  return {
    id: "0193a000-0000-7000-8000-000000000001",
    sessionId: `s-${kind}`,
    kind,
    input,
    attempt: 1,
    maxAttempts: 3,
    timeoutMs: 10_000,
    backoffMs: [],
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    reclaimed: false,
    ...overrides,
  };
}
