// A repository names its brains' endpoints and the variable holding their key: the server's
// own variables must never be sent. Checked against a real local HTTP endpoint standing in
// for a repository-chosen baseUrl: whatever the configuration names, the value of
// ADMIN_PASSWORD, DATABASE_URL, NEXTAUTH_SECRET or PATH never arrives.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBrain } from "../../server/agents/brain-check";
import { agentEnvRefusal } from "../../server/process/env";
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
  it("by default each provider's documented key variable; the server's, sign-in and delivery secrets never, whatever the list says", () => {
    const byDefault = { allowed: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"] };
    expect(agentEnvRefusal("OPENAI_API_KEY", byDefault)).toBeNull();
    expect(agentEnvRefusal("PATH", byDefault)).toMatch(
      /PATH is not on the admin's list of variables agents may receive \(settings access.agentEnv/,
    );
    expect(agentEnvRefusal("STRIPE_API_KEY", byDefault)).toMatch(/not on the admin's list/);
    for (const secret of ["ADMIN_PASSWORD", "DATABASE_URL", "NEXTAUTH_SECRET"]) {
      expect(agentEnvRefusal(secret, { allowed: ["*"] })).toMatch(/server's own secrets/);
    }
    for (const secret of ["OIDC_CLIENT_SECRET", "GITHUB_SECRET", "CATCAFE_TOKEN"]) {
      expect(agentEnvRefusal(secret, { allowed: ["*"] })).toMatch(/sign-in secret/);
    }
    expect(agentEnvRefusal("GH_DELIVERY", { allowed: ["*"], never: ["GH_DELIVERY"] })).toMatch(/delivery token/);
    expect(agentEnvRefusal("LLM_KEY", { allowed: ["LLM_*"] })).toBeNull();
    expect(agentEnvRefusal("MYXKEY", { allowed: ["MY.KEY"] })).not.toBeNull(); // patterns are not regular expressions
  });

  it.each([
    ["ADMIN_PASSWORD", ["*"]],
    ["DATABASE_URL", ["*"]],
    ["NEXTAUTH_SECRET", ["*"]],
    ["PATH", undefined],
  ] as const)("a check of a brain naming %s (list %j) sends no value of it to the endpoint, and says why", async (name, allowed) => {
    const before = stub.requests.length;
    const outcome = await checkBrain(
      { kind: "openai", id: "repo-brain", baseUrl: `${stub.url}/v1`, model: "m", apiKeyEnv: name },
      { env: env as unknown as NodeJS.ProcessEnv, privateHosts: STUB_PRIVATE_HOSTS, ...(allowed ? { keyPolicy: { allowed } } : {}) },
    ).then(
      (result) => ({ refused: result.auth === "missing_key", message: result.message }),
      // The server's secrets are refused already when the configuration is read.
      (err: Error) => ({ refused: true, message: err.message }),
    );
    expect(outcome.refused).toBe(true);
    expect(outcome.message).toMatch(name === "PATH" ? /PATH is not on the admin's list/ : /secrets/);
    const sent = stub.requests.slice(before).map((r) => JSON.stringify(r.headers) + r.body + r.url);
    for (const value of Object.values(env).filter((v) => v !== env.OPENAI_API_KEY)) {
      for (const s of sent) expect(s).not.toContain(value);
    }
  });

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
