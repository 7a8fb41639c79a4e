// A runner's /metrics (docs/operations.md, "Metrics"): a small HTTP server on
// CATCAFE_METRICS_PORT (none when unset), bound to CATCAFE_METRICS_HOST (127.0.0.1 by
// default), under the access rule of ./access.ts with the socket's own address.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { metricsAccess } from "./access";
import { metricsText } from "./registry";

export interface MetricsServerOptions {
  port: number;
  host?: string;
  token?: string;
}

export interface MetricsServer {
  /** The address it listens on (the port chosen when `port` was 0). */
  address: AddressInfo;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found: GET /metrics\n");
      return;
    }
    const access = metricsAccess(
      { authorization: req.headers.authorization ?? null, address: req.socket.remoteAddress ?? null },
      options.token,
    );
    if (!access.ok) {
      res.writeHead(access.status, { "Content-Type": "text/plain" }).end(`${access.message}\n`);
      return;
    }
    metricsText().then(
      ({ contentType, body }) => res.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" }).end(body),
      (err: unknown) => res.writeHead(500, { "Content-Type": "text/plain" }).end(`metrics failed: ${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  return {
    address: server.address() as AddressInfo,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
