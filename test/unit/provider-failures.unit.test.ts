// One rule for a provider's refusal, whoever met it: an HTTP brain reading the response
// (brains/errors.ts) and a CLI shell reading what the CLI reported (agents/shells/failures.ts)
// must put the same status and message in the same class. In particular 529 / "overloaded"
// is a rate limit for both (the provider says "come back later").
import { describe, expect, it } from "vitest";
import { classifyCliFailure } from "../../server/agents/shells/failures";
import { httpError, providerErrorDetail, streamError } from "../../server/brains/errors";

const SAYS: Array<{ code: string | null; message: string }> = [
  { code: null, message: "" },
  { code: "overloaded_error", message: "Overloaded" },
  { code: null, message: "The service is overloaded" },
  { code: null, message: "We're currently experiencing high demand" },
  { code: "rate_limit_error", message: "Too many requests" },
  { code: "server_error", message: "Internal server error" },
  { code: "api_error", message: "quota exceeded for this minute" },
  { code: "authentication_error", message: "invalid x-api-key" },
  { code: "invalid_request_error", message: "prompt is too long" },
];

function viaHttp(status: number, says: { code: string | null; message: string }) {
  const body = JSON.stringify({ error: { ...(says.code ? { type: says.code } : {}), message: says.message } });
  const error = httpError({ provider: "P", status, headers: new Headers(), body, secrets: [] });
  return { errorClass: error.errorClass, retryable: error.retryable };
}

function viaCli(status: number, says: { code: string | null; message: string }) {
  const errorClass = classifyCliFailure({ status, code: says.code, message: says.message });
  return { errorClass, retryable: errorClass === "provider_rate_limit" || errorClass === "provider_network_error" };
}

describe("provider failures: HTTP brains and CLI shells classify alike", () => {
  it("every error status with every kind of message lands in the same class, equally retryable", () => {
    const diverging: string[] = [];
    for (let status = 400; status <= 599; status++) {
      for (const says of SAYS) {
        const http = viaHttp(status, says);
        const cli = viaCli(status, says);
        if (http.errorClass !== cli.errorClass || http.retryable !== cli.retryable) {
          diverging.push(`${status} ${JSON.stringify(says)}: http ${http.errorClass}, cli ${cli.errorClass}`);
        }
      }
    }
    expect(diverging).toEqual([]);
  });

  it("529 and a server error saying it is overloaded are a retryable rate limit", () => {
    expect(viaHttp(529, { code: null, message: "" })).toEqual({ errorClass: "provider_rate_limit", retryable: true });
    expect(viaCli(529, { code: null, message: "" })).toEqual({ errorClass: "provider_rate_limit", retryable: true });
    expect(viaHttp(503, { code: null, message: "The service is overloaded" }).errorClass).toBe("provider_rate_limit");
    expect(viaCli(503, { code: null, message: "The service is overloaded" }).errorClass).toBe("provider_rate_limit");
    expect(viaCli(Number.NaN, { code: "overloaded_error", message: "Overloaded" }).errorClass).toBe("provider_rate_limit");
  });

  it("an overloaded error event mid-stream is the same rate limit", () => {
    const anthropic = providerErrorDetail({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    const openai = providerErrorDetail({ error: { message: "The server is overloaded", type: "server_error", code: "server_error" } });
    for (const detail of [anthropic, openai]) {
      const error = streamError("P", detail, "partial", []);
      expect([error.errorClass, error.retryable]).toEqual(["provider_rate_limit", true]);
    }
    expect(streamError("P", providerErrorDetail({ error: { type: "api_error", message: "boom" } }), "", []).errorClass).toBe(
      "provider_network_error",
    );
  });
});
