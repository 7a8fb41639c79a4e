// What the server logged as errors while a test ran: its logger (server/log.ts) watched, so a
// test can say that nothing it sent was logged as an internal error, and no conflict either.
import { afterAll, beforeAll, vi, type MockInstance } from "vitest";
import { logger } from "../../server/log";

/** The error lines the server logs from now until the end of the file's tests, as text. */
export function watchErrorLog(): () => string[] {
  let spy: MockInstance | null = null;
  beforeAll(() => {
    spy = vi.spyOn(logger, "error");
  });
  afterAll(() => spy?.mockRestore());
  return () =>
    (spy?.mock.calls ?? []).map((args) =>
      JSON.stringify(args, (_k, v: unknown) => (v instanceof Error ? { ...v, message: v.message } : v)),
    );
}
