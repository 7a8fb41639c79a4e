// How provider failures reported by the CLIs map onto the error taxonomy (req W10). The
// messages are the CLIs' own (from their recorded output) or the providers' usual ones.
import { describe, expect, it } from "vitest";
import { classifyCliFailure, cliFailureError, type CliFailure } from "../../server/agents/shells/failures";

const CASES: Array<[CliFailure, ReturnType<typeof classifyCliFailure>]> = [
  // by status
  [{ message: "Invalid API key · Fix external API key", status: 401, code: "authentication_error" }, "provider_auth_error"],
  [{ message: "Permission denied", status: 403 }, "provider_auth_error"],
  [{ message: "model: claude-x not found", status: 404 }, "provider_auth_error"],
  [{ message: "API Error: Request rejected (429)", status: 429 }, "provider_rate_limit"],
  [{ message: "Overloaded", status: 529, code: "overloaded_error" }, "provider_rate_limit"],
  [{ message: "The service is overloaded", status: 503 }, "provider_rate_limit"],
  [{ message: "Internal server error", status: 500 }, "provider_network_error"],
  [{ message: "prompt is too long", status: 400 }, "tool_error"],
  // by message (Codex reports no status)
  [{ message: "unexpected status 401 Unauthorized: invalid x-api-key, url: http://127.0.0.1:1/v1/responses" }, "provider_auth_error"],
  [{ message: "Missing environment variable: `OPENAI_API_KEY`." }, "provider_auth_error"],
  [{ message: "exceeded retry limit, last status: 429 Too Many Requests" }, "provider_rate_limit"],
  [{ message: "We’re currently experiencing high demand, which may cause temporary errors." }, "provider_rate_limit"],
  [
    { message: "stream disconnected before completion: Transport error: network error: error decoding response body" },
    "provider_network_error",
  ],
  [{ message: "Reconnecting... waiting for network (Connection failed: error sending request)" }, "provider_network_error"],
  // Gemini CLI: the API's JSON error inside the message
  [
    { message: '[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]', code: "unknown" },
    "provider_auth_error",
  ],
  [
    {
      message:
        "[API Error: Resource has been exhausted (e.g. check quota).]\nPlease wait and try again later. ...or switch to another /auth method",
    },
    "provider_rate_limit",
  ],
  [{ message: "[API Error: terminated]" }, "provider_network_error"],
  [{ message: "[API Error: fetch failed]" }, "provider_network_error"],
  // Claude Code
  [
    {
      message: "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again.",
      code: "connection_failed",
    },
    "provider_network_error",
  ],
  [{ message: "Credit balance is too low" }, "provider_auth_error"],
  // the CLI's own trouble
  [{ message: "result error_max_turns" }, "tool_error"],
  [{ message: "Reached max turns (30)" }, "tool_error"],
];

describe("classifying a failure a CLI reports", () => {
  it.each(CASES)("%j → %s", (failure, expected) => {
    expect(classifyCliFailure(failure)).toBe(expected);
  });

  it("rate limits and network errors are retryable; auth and tool errors are not; the message names the CLI and the status", () => {
    expect(cliFailureError("claude", { message: "slow down", status: 429 }, "partial", [])).toMatchObject({
      errorClass: "provider_rate_limit",
      retryable: true,
      partialOutput: "partial",
      message: "claude reported an error (HTTP 429): slow down",
    });
    expect(cliFailureError("codex", { message: "[API Error: terminated]" }, "", []).retryable).toBe(true);
    expect(cliFailureError("gemini", { message: "API key not valid" }, "", []).retryable).toBe(false);
    expect(cliFailureError("gemini", { message: "weird" }, "", []).retryable).toBe(false);
  });

  it("keys never reach the message, whether known or key-shaped", () => {
    const err = cliFailureError("codex", { message: "bad key my-key-value-123 and sk-proj-abcdef123456 rejected", status: 401 }, "", [
      "my-key-value-123",
    ]);
    expect(err.message).not.toContain("my-key-value-123");
    expect(err.message).not.toContain("sk-proj-abcdef123456");
  });
});
