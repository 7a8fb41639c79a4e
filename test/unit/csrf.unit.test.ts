// The CSRF rule's edges (server/api/csrf.ts, docs/auth.md "Cross-site requests"): which
// content types count as JSON, what "this site" is, which requests the rule does not judge.
// Over HTTP, every mutation and REST route is in test/integration/csrf-trpc.int.test.ts and
// rest.int.test.ts.
import { describe, expect, it } from "vitest";
import { crossSiteRefusal } from "../../server/api/csrf";

const post = (headers: Record<string, string>, method = "POST") =>
  new Request("http://cats.test:3000/api/trpc/tasks.start", { method, headers });
const outcome = (req: Request) => crossSiteRefusal(req)?.code ?? "OK";

describe("crossSiteRefusal", () => {
  it.each([["application/json"], ["application/json; charset=utf-8"], ["Application/JSON;charset=UTF-8"], [" application/json "]])(
    "takes %j as JSON",
    (type) => expect(outcome(post({ "content-type": type }))).toBe("OK"),
  );

  it.each([
    ["multipart/form-data; boundary=x"],
    ["application/x-www-form-urlencoded"],
    ["text/plain"],
    ["text/plain; application/json"],
    ["application/jsonp"],
    ["application/json-seq"],
    ["application/octet-stream"],
  ])("refuses %j as 415", (type) => expect(outcome(post({ "content-type": type }))).toBe("UNSUPPORTED_MEDIA_TYPE"));

  it("refuses a body without a Content-Type, an empty one too", () => {
    expect(outcome(post({}))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(outcome(post({ "content-length": "0" }))).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  it("this site is the request's host with its port: X-Forwarded-Host, else Host, else its URL", () => {
    const json = { "content-type": "application/json" };
    expect(outcome(post({ ...json, origin: "http://cats.test:3000" }))).toBe("OK");
    expect(outcome(post({ ...json, origin: "http://cats.test:3001" }))).toBe("FORBIDDEN");
    expect(outcome(post({ ...json, origin: "http://sub.cats.test:3000" }))).toBe("FORBIDDEN");
    expect(outcome(post({ ...json, origin: "null" }))).toBe("FORBIDDEN");
    expect(outcome(post({ ...json, origin: "https://cats.example", host: "cats.example" }))).toBe("OK");
    expect(outcome(post({ ...json, origin: "https://cats.example", host: "localhost:3000", "x-forwarded-host": "cats.example" }))).toBe(
      "OK",
    );
    expect(outcome(post({ ...json, origin: "http://localhost:3000", "x-forwarded-host": "cats.example" }))).toBe("FORBIDDEN");
  });

  it("Sec-Fetch-Site: same-origin and none pass; same-site and cross-site are refused, with a same-host Origin too", () => {
    const json = { "content-type": "application/json" };
    expect(outcome(post({ ...json, "sec-fetch-site": "same-origin" }))).toBe("OK");
    expect(outcome(post({ ...json, "sec-fetch-site": "none" }))).toBe("OK");
    expect(outcome(post({ ...json, "sec-fetch-site": "same-site" }))).toBe("FORBIDDEN");
    expect(outcome(post({ ...json, "sec-fetch-site": "cross-site" }))).toBe("FORBIDDEN");
    expect(outcome(post({ ...json, origin: "http://cats.test:3000", "sec-fetch-site": "cross-site" }))).toBe("FORBIDDEN");
  });

  it("a foreign origin is named before the content type: a form from another site is 403", () => {
    expect(outcome(post({ "content-type": "multipart/form-data; boundary=x", origin: "http://evil.test" }))).toBe("FORBIDDEN");
  });

  it("does not judge reads, nor a request with a bearer token (its cookie is never read); any other Authorization is judged", () => {
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(outcome(post({ origin: "http://evil.test" }, method))).toBe("OK");
    expect(outcome(post({ authorization: "Bearer cc_abc", origin: "http://evil.test", "content-type": "text/plain" }))).toBe("OK");
    expect(outcome(post({ authorization: "Basic YTpi", "content-type": "text/plain" }))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(outcome(post({ authorization: "Bearer", "content-type": "text/plain" }))).toBe("UNSUPPORTED_MEDIA_TYPE");
    for (const method of ["PUT", "PATCH", "DELETE"])
      expect(outcome(post({ "content-type": "text/plain" }, method))).toBe("UNSUPPORTED_MEDIA_TYPE");
  });
});
