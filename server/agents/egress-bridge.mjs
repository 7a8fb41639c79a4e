/* global Buffer */
// Runs inside an agent's sandbox, in its own network namespace where nothing but loopback
// exists (server/process/sandbox.ts, docs/security.md "Network"): listens on the sandbox's
// 127.0.0.1 for the proxy port and for each forwarded port, carries every connection over
// the Unix socket of the runner's egress proxy (server/agents/egress.ts), which decides
// where it may go, then runs the agent and ends the way it ended.
//
//   node egress-bridge.mjs <config.json> -- <program> [args...]
//
// config.json: { "socket": path, "proxyPort": number, "forwards": [{ "host", "port" }] }.
// A forwarded port opens a tunnel to host:port with CONNECT first, so an agent that calls a
// loopback address directly (a local provider the admin allowed) needs no proxy settings.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";

const [configPath, separator, program, ...args] = process.argv.slice(2);
if (!configPath || separator !== "--" || !program) {
  process.stderr.write("usage: egress-bridge.mjs <config.json> -- <program> [args...]\n");
  process.exit(2);
}
const config = JSON.parse(fs.readFileSync(configPath, "utf8"));

function pipeBoth(a, b) {
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

function listen(port, onConnection) {
  return new Promise((resolve, reject) => {
    const server = net.createServer({ pauseOnConnect: true }, onConnection);
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

await listen(config.proxyPort, (client) => {
  const upstream = net.connect(config.socket);
  pipeBoth(client, upstream);
  client.resume();
});

for (const forward of config.forwards) {
  await listen(forward.port, (client) => {
    const upstream = net.connect(config.socket, () => {
      const target = forward.host.includes(":") ? `[${forward.host}]:${forward.port}` : `${forward.host}:${forward.port}`;
      upstream.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    });
    let head = Buffer.alloc(0);
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      upstream.off("data", onData);
      if (!/^HTTP\/1\.[01] 200/.test(head.subarray(0, end).toString("latin1"))) {
        client.destroy();
        upstream.destroy();
        return;
      }
      const rest = head.subarray(end + 4);
      if (rest.length) client.write(rest);
      pipeBoth(client, upstream);
      client.resume();
    };
    upstream.on("data", onData);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
}

const child = spawn(program, args, { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (err) => {
  process.stderr.write(`${program}: ${err.message}\n`);
  process.exit(err.code === "ENOENT" ? 127 : 126);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Ended by a signal: end the same way, so the runner sees what it would have seen.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
