// A repository names its brains' endpoints and the variable holding their key: the server's
// own variables must never be sent. Checked against a real local HTTP endpoint standing in
// for a repository-chosen baseUrl: whatever the configuration names, the value of
// ADMIN_PASSWORD, DATABASE_URL, NEXTAUTH_SECRET or PATH never arrives.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBrain } from "../../server/agents/brain-check";
import { brainKeyEnvAllowlist, keyEnvRefusal } from "../../server/process/env";
import { startBrainStub, STUB_PRIVATE_HOSTS, type BrainStub } from "../helpers/brains-stub";

let stub: BrainStub;
beforeAll(async () => {
  stub = await startBrainStub((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ data: [{ id: "m" }] }));
  });
});
afterAll(() => stub.close());

const env = {
  PATH: "/usr/bin:/bin",
  ADMIN_PASSWORD: "admin-password-value",
  DATABASE_URL: "postgres://catcafe:db-password-value@localhost/catcafe",
  NEXTAUTH_SECRET: "nextauth-secret-value",
  OPENAI_API_KEY: "sk-allowed-key",
};

describe("which variables a brain's key may come from", () => {
  it("by default names matching *_API_KEY; the server's secrets never, whatever the allowlist says", () => {
    expect(brainKeyEnvAllowlist({})).toEqual(["*_API_KEY"]);
    expect(keyEnvRefusal("OPENAI_API_KEY", ["*_API_KEY"])).toBeNull();
    expect(keyEnvRefusal("PATH", ["*_API_KEY"])).toMatch(/not allowed as a brain's key/);
    for (const secret of ["ADMIN_PASSWORD", "DATABASE_URL", "NEXTAUTH_SECRET"]) {
      expect(keyEnvRefusal(secret, ["*"])).toMatch(/server's own secrets/);
    }
    expect(brainKeyEnvAllowlist({ CATCAFE_BRAIN_KEY_ENV: "LLM_*, MY.KEY" })).toEqual(["LLM_*"]);
    expect(keyEnvRefusal("MYXKEY", ["MY.KEY"])).not.toBeNull(); // patterns are not regular expressions
  });

  it.each([
    ["ADMIN_PASSWORD", ["*"]],
    ["DATABASE_URL", ["*"]],
    ["NEXTAUTH_SECRET", ["*"]],
    ["PATH", undefined],
  ] as const)(
    "a check of a brain naming %s (allowlist %j) sends no value of it to the endpoint, and says why",
    async (name, allowedKeyEnv) => {
      const before = stub.requests.length;
      const outcome = await checkBrain(
        { kind: "openai", id: "repo-brain", baseUrl: `${stub.url}/v1`, model: "m", apiKeyEnv: name },
        { env: env as unknown as NodeJS.ProcessEnv, privateHosts: STUB_PRIVATE_HOSTS, ...(allowedKeyEnv ? { allowedKeyEnv } : {}) },
      ).then(
        (result) => ({ refused: result.auth === "missing_key", message: result.message }),
        // The server's secrets are refused already when the configuration is read.
        (err: Error) => ({ refused: true, message: err.message }),
      );
      expect(outcome.refused).toBe(true);
      expect(outcome.message).toMatch(name === "PATH" ? /PATH is not allowed as a brain's key/ : /secrets/);
      const sent = stub.requests.slice(before).map((r) => JSON.stringify(r.headers) + r.body + r.url);
      for (const value of Object.values(env).filter((v) => v !== env.OPENAI_API_KEY)) {
        for (const s of sent) expect(s).not.toContain(value);
      }
    },
  );

  it("an allowed key is sent; with sendKey false (a non-admin checking a repository's brain) it is not", async () => {
    const brain = { kind: "openai" as const, id: "repo-brain", baseUrl: `${stub.url}/v1`, model: "m", apiKeyEnv: "OPENAI_API_KEY" };
    let before = stub.requests.length;
    await checkBrain(brain, { env: env as unknown as NodeJS.ProcessEnv, privateHosts: STUB_PRIVATE_HOSTS });
    expect(stub.requests.slice(before).map((r) => r.headers.authorization)).toEqual([`Bearer ${env.OPENAI_API_KEY}`]);
    before = stub.requests.length;
    await checkBrain(brain, { env: env as unknown as NodeJS.ProcessEnv, sendKey: false, privateHosts: STUB_PRIVATE_HOSTS });
    expect(stub.requests.slice(before).map((r) => r.headers.authorization)).toEqual([undefined]);
  });
});
