// A local TCP proxy in front of PostgreSQL (tests and npm run chaos), to cut a process off from the database (and let
// it back) without touching the server that other tests share: `cut()` drops every open
// connection and refuses new ones until `restore()`.
import net from "node:net";

export interface TcpProxy {
  port: number;
  /** The database URL with host and port replaced by the proxy's. */
  url(databaseUrl: string): string;
  cut(): void;
  restore(): void;
  /** As a stopped server: open connections dropped, new ones refused (ECONNREFUSED) until `start()`. */
  stop(): Promise<void>;
  /** Listens again on the same port after `stop()`. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url(databaseUrl) {
      const u = new URL(databaseUrl);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    async stop() {
      open = false;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    restore() {
      open = true;
    },
    async start() {
      open = true;
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async close() {
      open = false;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
