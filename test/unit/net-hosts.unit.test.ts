// Host rules and non-public addresses (server/net/hosts.ts, docs/configuration.md "Outbound
// calls"): what a rule of access.privateHosts may say and what it allows, every range an
// address is refused on, and a destination judged by the address its name resolves to at the
// moment of the check.
import { describe, expect, it } from "vitest";
import { checkDestination, hostAllowed, hostRules, isNonPublicAddress, parseHostRule, type Resolve } from "../../server/net/hosts";

describe("parseHostRule", () => {
  it("reads a name, a wildcard, IPv4 and bracketed IPv6, each with an optional port, case-insensitively", () => {
    expect(parseHostRule("Ollama.Internal")).toEqual({ host: "ollama.internal", wildcard: false, port: null });
    expect(parseHostRule(" localhost:11434 ")).toEqual({ host: "localhost", wildcard: false, port: 11434 });
    expect(parseHostRule("*.corp.example")).toEqual({ host: "corp.example", wildcard: true, port: null });
    expect(parseHostRule("*.corp.example:8443")).toEqual({ host: "corp.example", wildcard: true, port: 8443 });
    expect(parseHostRule("127.0.0.1")).toEqual({ host: "127.0.0.1", wildcard: false, port: null });
    expect(parseHostRule("10.0.0.5:65535")).toEqual({ host: "10.0.0.5", wildcard: false, port: 65535 });
    expect(parseHostRule("[::1]")).toEqual({ host: "::1", wildcard: false, port: null });
    expect(parseHostRule("[FD00::1]:8080")).toEqual({ host: "fd00::1", wildcard: false, port: 8080 });
  });

  it("refuses what is not a rule, saying why", () => {
    const why = (text: string) => {
      const rule = parseHostRule(text);
      return "error" in rule ? rule.error : null;
    };
    expect(why("")).toMatch(/\(empty\)/);
    expect(why("::1")).toMatch(/an IPv6 address must be in brackets/);
    expect(why("[::1")).toMatch(/no closing \]/);
    expect(why("[not-v6]")).toMatch(/not an IPv6 address in brackets/);
    expect(why("[::1]x")).toMatch(/unexpected text after \]/);
    expect(why("[::1]:0")).toMatch(/the port must be 1 to 65535/);
    expect(why("host:0")).toMatch(/the port must be 1 to 65535/);
    expect(why("host:65536")).toMatch(/the port must be 1 to 65535/);
    expect(why("host:http")).toMatch(/the port must be 1 to 65535/);
    expect(why("*.10.0.0.1")).toMatch(/a wildcard needs a name/);
    expect(why("*")).toMatch(/not a host name/);
    expect(why("http://host")).toMatch(/not a host name|the port/);
    expect(why("under_score.example")).toMatch(/not a host name/);
    expect(why("-lead.example")).toMatch(/not a host name/);
    expect(why("a".repeat(64) + ".example")).toMatch(/not a host name/);
    expect(why("host name")).toMatch(/not a host name/);
    // Every message shows the forms a rule may take.
    expect(why("bad rule")).toContain("write a name, *.name, an IP address or [IPv6], with an optional :port");
  });

  it("hostRules keeps the rules that parse", () => {
    expect(hostRules(["ok.example", "not a rule", "[::1]:80"])).toEqual([
      { host: "ok.example", wildcard: false, port: null },
      { host: "::1", wildcard: false, port: 80 },
    ]);
  });
});

describe("hostAllowed", () => {
  const rules = hostRules(["localhost:11434", "*.corp.example", "10.0.0.5", "[::1]:8080"]);

  it("matches the name and, when the rule has one, the port", () => {
    expect(hostAllowed(rules, "localhost", 11434)).toBe(true);
    expect(hostAllowed(rules, "LOCALHOST.", 11434)).toBe(true);
    expect(hostAllowed(rules, "localhost", 22)).toBe(false);
    expect(hostAllowed(rules, "10.0.0.5", 1)).toBe(true);
    expect(hostAllowed(rules, "10.0.0.6", 1)).toBe(false);
  });

  it("a wildcard allows any subdomain, never the name itself nor a look-alike", () => {
    expect(hostAllowed(rules, "llm.corp.example", 443)).toBe(true);
    expect(hostAllowed(rules, "a.b.corp.example", 443)).toBe(true);
    expect(hostAllowed(rules, "corp.example", 443)).toBe(false);
    expect(hostAllowed(rules, "evilcorp.example", 443)).toBe(false);
  });

  it("IPv6 as a URL writes it, in brackets", () => {
    expect(hostAllowed(rules, "[::1]", 8080)).toBe(true);
    expect(hostAllowed(rules, "::1", 8080)).toBe(true);
    expect(hostAllowed(rules, "[::1]", 8081)).toBe(false);
  });
});

describe("isNonPublicAddress", () => {
  it("is true on every non-public IPv4 range", () => {
    for (const address of [
      "0.0.0.0",
      "10.1.2.3",
      "100.64.0.1",
      "127.0.0.1",
      "127.255.255.254",
      "169.254.169.254",
      "172.16.0.1",
      "172.31.255.255",
      "192.0.0.8",
      "192.0.2.1",
      "192.168.1.1",
      "198.18.0.1",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
    ])
      expect(isNonPublicAddress(address), address).toBe(true);
  });

  it("is true on every non-public IPv6 range, and for IPv4 ones written as IPv6", () => {
    for (const address of [
      "::",
      "::1",
      "[::1]",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "ff02::1",
      "2001:db8::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::127.0.0.1",
      "64:ff9b::10.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b:1::1",
    ])
      expect(isNonPublicAddress(address), address).toBe(true);
  });

  it("is false for public addresses, and for what is not an address", () => {
    for (const address of [
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "100.128.0.1",
      "169.255.0.1",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
      "64:ff9b::8.8.8.8",
      "example.com",
    ])
      expect(isNonPublicAddress(address), address).toBe(false);
  });
});

describe("checkDestination", () => {
  const setting = "access.privateHosts";

  it("judges a name by what it resolves to now: public, then private (refused, naming the setting)", async () => {
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    const resolve: Resolve = async () => answers.shift()!;
    expect(await checkDestination("hooks.example.test", 443, [], { resolve, setting })).toEqual({ ok: true, address: "93.184.216.34" });
    const second = await checkDestination("hooks.example.test", 443, [], { resolve, setting });
    expect(second).toEqual({
      ok: false,
      why: "non_public",
      reason:
        "hooks.example.test is on a loopback, link-local or private address (127.0.0.1); an admin can allow it in the settings (access.privateHosts)",
    });
  });

  it("refuses a name when any of its addresses is private", async () => {
    const resolve: Resolve = async () => ["93.184.216.34", "10.0.0.1"];
    expect(await checkDestination("mixed.example.test", 80, [], { resolve, setting })).toMatchObject({ ok: false, why: "non_public" });
  });

  it("an allowed host goes to the address it resolved to, on the allowed port only", async () => {
    const resolve: Resolve = async () => ["10.0.0.5"];
    const rules = hostRules(["llm.internal:8000"]);
    expect(await checkDestination("llm.internal", 8000, rules, { resolve, setting })).toEqual({ ok: true, address: "10.0.0.5" });
    expect(await checkDestination("llm.internal", 8001, rules, { resolve, setting })).toMatchObject({ ok: false, why: "non_public" });
  });

  it("a literal address is its own answer (the system's resolver is not asked)", async () => {
    expect(await checkDestination("[::1]", 80, [], { setting })).toMatchObject({ ok: false, why: "non_public" });
    expect(await checkDestination("127.0.0.1", 80, hostRules(["127.0.0.1"]), { setting })).toEqual({ ok: true, address: "127.0.0.1" });
    expect(await checkDestination("169.254.169.254", 80, [], { setting })).toMatchObject({ ok: false, why: "non_public" });
    expect(await checkDestination("[::ffff:7f00:1]", 80, [], { setting })).toMatchObject({ ok: false, why: "non_public" });
  });

  it("a name that does not resolve, or resolves to nothing, is unresolved", async () => {
    const failing: Resolve = async () => {
      throw new Error("ENOTFOUND");
    };
    expect(await checkDestination("nowhere.test", 80, [], { resolve: failing, setting })).toEqual({
      ok: false,
      why: "unresolved",
      reason: "nowhere.test does not resolve",
    });
    expect(await checkDestination("empty.test", 80, [], { resolve: async () => [], setting })).toMatchObject({ why: "unresolved" });
  });
});
