// Who may scrape /metrics (server/metrics/access.ts): with CATCAFE_METRICS_TOKEN set, only a
// bearer of it, from any address; without it, only loopback and private addresses.
import { describe, expect, it } from "vitest";
import { isPrivateAddress, metricsAccess } from "../../server/metrics/access";

const TOKEN = "s3cret-metrics-token-0123";

describe("metrics access: token set", () => {
  it("lets a bearer of the token in, from any address", () => {
    for (const address of ["8.8.8.8", "127.0.0.1", null])
      expect(metricsAccess({ authorization: `Bearer ${TOKEN}`, address }, TOKEN)).toEqual({ ok: true });
    expect(metricsAccess({ authorization: `bearer ${TOKEN}`, address: null }, TOKEN)).toEqual({ ok: true });
  });

  it("refuses with 401 every request without the right token, even from loopback", () => {
    for (const authorization of [
      null,
      "",
      "Bearer",
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(1)}`,
      TOKEN,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN} extra`,
    ]) {
      const access = metricsAccess({ authorization, address: "127.0.0.1" }, TOKEN);
      expect(access, String(authorization)).toMatchObject({ ok: false, status: 401 });
    }
  });
});

describe("metrics access: no token", () => {
  it("lets loopback and private addresses in", () => {
    for (const address of [
      "127.0.0.1",
      "127.8.9.10",
      "::1",
      "::ffff:127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.5",
      "::ffff:192.168.0.2",
      "fd12:3456::1",
      "fc00::1",
      "fe80::1",
    ])
      expect(metricsAccess({ authorization: null, address }, undefined), address).toEqual({ ok: true });
  });

  it("refuses public and unknown addresses with 403, whatever the header says", () => {
    for (const address of [
      "8.8.8.8",
      "172.15.0.1",
      "172.32.0.1",
      "192.169.0.1",
      "11.0.0.1",
      "::ffff:8.8.8.8",
      "2001:db8::1",
      "fec0::1",
      "localhost",
      "",
      null,
    ]) {
      const access = metricsAccess({ authorization: `Bearer ${TOKEN}`, address }, undefined);
      expect(access, String(address)).toMatchObject({ ok: false, status: 403 });
    }
    expect(metricsAccess({ authorization: null, address: "8.8.8.8" }, "")).toMatchObject({ ok: false, status: 403 });
    // No socket address (the web server, where a client only claims one): no token, no scrape, said why.
    expect(metricsAccess({ authorization: null, address: null }, undefined)).toEqual({
      ok: false,
      status: 403,
      message: "the web server's metrics need CATCAFE_METRICS_TOKEN: the address a request claims cannot be trusted",
    });
  });

  it("classifies addresses by their ranges", () => {
    expect(isPrivateAddress("172.20.1.1")).toBe(true);
    expect(isPrivateAddress("128.0.0.1")).toBe(false);
    expect(isPrivateAddress("not an address")).toBe(false);
  });
});
