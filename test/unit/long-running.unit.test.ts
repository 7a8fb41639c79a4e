// The long-running heuristic (server/commands/long-running.ts), one row per program, pattern,
// launcher and flag it knows: each row says whether argv is refused and with which reason, so
// a name dropped from a table, a flag no longer skipped or a reworded message fails its row.
import { describe, expect, it } from "vitest";
import { longRunningReason } from "../../server/commands/long-running";

type Row = [argv: string[], reason: string | null];

describe("longRunningReason", () => {
  it.each<Row>([
    [["npx", "vitest", "--watch"], "`--watch` keeps the command running"],
    [["npx", "jest", "--watchAll"], "`--watchAll` keeps the command running"],
    [["npx", "jest", "--watch-all"], "`--watch-all` keeps the command running"],
    [["npx", "jest", "--watchall"], "`--watchall` keeps the command running"],
    [["deno", "test", "--watch-files"], "`--watch-files` keeps the command running"],
    [["node", "--watch-path=src", "index.js"], "`--watch-path=src` keeps the command running"],
    [["npx", "tsc", "--watch=true"], "`--watch=true` keeps the command running"],
    [["npx", "mocha", "--WATCH"], "`--WATCH` keeps the command running"],
    // Anywhere in argv, even behind a program the heuristic does not know.
    [["make", "test", "--watch"], "`--watch` keeps the command running"],
    [["npx", "eslint", "--no-watch"], null],
    [["npx", "vitest", "--watcher"], null],
    [["npx", "jest", "--watchAllTests"], null],
  ])("watch flag: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>(
    [
      "nodemon",
      "http-server",
      "live-server",
      "serve",
      "browser-sync",
      "json-server",
      "webpack-dev-server",
      "pm2",
      "forever",
      "uvicorn",
      "gunicorn",
      "hypercorn",
      "daphne",
      "waitress-serve",
      "watch",
      "watchman",
      "top",
      "htop",
    ].map((program): Row => [[program, "x"], `\`${program}\` runs until stopped`]),
  )("a program that only serves or supervises: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
    // Named by its path as well: only the basename counts.
    expect(longRunningReason([`/usr/local/bin/${argv[0]}`])).toBe(reason);
  });

  const serving: Record<string, string[]> = {
    next: ["dev", "start"],
    nuxt: ["dev", "start", "preview"],
    nuxi: ["dev", "start", "preview"],
    astro: ["dev", "preview"],
    remix: ["dev"],
    gatsby: ["develop", "serve"],
    expo: ["start"],
    ng: ["serve", "s"],
    "react-scripts": ["start"],
    webpack: ["serve", "server", "watch"],
    vitest: ["watch", "dev"],
    flask: ["run"],
    streamlit: ["run"],
    rails: ["s", "server"],
    jekyll: ["serve", "server", "s"],
    hugo: ["server", "serve"],
    mkdocs: ["serve"],
    "docker-compose": ["up", "watch"],
    deno: ["serve"],
  };
  it.each<Row>(
    Object.entries(serving).flatMap(([program, subs]) =>
      subs.map((sub): Row => [[program, sub], `\`${program} ${sub}\` starts a long-running server`]),
    ),
  )("a serving subcommand: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["next", "build"], null],
    [["next", "lint", "dev"], null],
    [["nuxt", "generate"], null],
    [["astro", "build"], null],
    [["gatsby", "build"], null],
    [["ng", "test"], null],
    [["react-scripts", "test"], null],
    [["webpack", "build"], null],
    [["vitest", "run"], null],
    [["flask", "routes"], null],
    [["rails", "test"], null],
    [["hugo", "build"], null],
    [["mkdocs", "build"], null],
    [["docker-compose", "down"], null],
    [["deno", "test"], null],
    // The subcommand is the first argument that is not a flag or a flag's value.
    [["next", "-p", "3000", "start"], "`next start` starts a long-running server"],
    [["next", "--port", "3000", "dev"], "`next dev` starts a long-running server"],
    [["next", "-H", "0.0.0.0", "dev"], "`next dev` starts a long-running server"],
    [["next", "--hostname", "localhost", "start"], "`next start` starts a long-running server"],
    [["webpack", "-c", "webpack.config.js", "serve"], "`webpack serve` starts a long-running server"],
    [["webpack", "--config", "webpack.config.js", "watch"], "`webpack watch` starts a long-running server"],
    [["next", "--debug", "dev"], "`next dev` starts a long-running server"],
    [["next", "build", "dev"], null],
    // With no command at all, `next` and `nuxt` run their dev server; asking for help or the version does not.
    [["next"], "`next` with no command starts its dev server"],
    [["nuxt"], "`nuxt` with no command starts its dev server"],
    [["next", "-p", "3000"], "`next` with no command starts its dev server"],
    [["npx", "next"], "`next` with no command starts its dev server"],
    [["next", "--help"], null],
    [["next", "-h"], null],
    [["nuxt", "--version"], null],
    [["next", "-v"], null],
    [["astro"], null],
  ])("serving subcommands, flags and other subcommands: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["npm", "start"], "`npm start` starts a long-running server"],
    [["npm", "restart"], "`npm restart` starts a long-running server"],
    [["npm", "run", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["npm", "run-script", "serve"], "the `serve` script conventionally starts a server or a watcher"],
    [["npm", "rum", "develop"], "the `develop` script conventionally starts a server or a watcher"],
    [["npm", "urn", "server"], "the `server` script conventionally starts a server or a watcher"],
    [["npm", "run", "preview"], "the `preview` script conventionally starts a server or a watcher"],
    [["npm", "run", "watch"], "the `watch` script conventionally starts a server or a watcher"],
    [["npm", "run", "start"], "the `start` script conventionally starts a server or a watcher"],
    [["npm", "run", "start:api"], "the `start:api` script conventionally starts a server or a watcher"],
    [["npm", "run", "dev:"], "the `dev:` script conventionally starts a server or a watcher"],
    [["npm", "run", "build"], null],
    [["npm", "run", "prestart"], null],
    [["npm", "run", "devtools"], null],
    [["npm", "run", "test:dev"], null],
    [["npm", "run"], null],
    [["npm"], null],
    [["npm", "--version"], null],
    [["npm", "test"], null],
    // npm has no shorthand for scripts: `npm dev` is not `npm run dev`.
    [["npm", "dev"], null],
    [["npm", "server.js"], null],
    [["npm", "--prefix", "web", "start"], "`npm start` starts a long-running server"],
    [["npm", "-w", "web", "run", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["npm", "--workspace", "web", "run", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["npm", "run", "--silent", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["npm", "run", "--", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["pnpm", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["pnpm", "run", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["pnpm", "start"], "the `start` script conventionally starts a server or a watcher"],
    [["pnpm", "restart"], null],
    [["pnpm", "run-script", "dev"], null],
    [["pnpm", "--filter", "web", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["pnpm", "-F", "web", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["pnpm", "-C", "web", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["pnpm", "--dir", "web", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["yarn", "--cwd", "web", "start"], "the `start` script conventionally starts a server or a watcher"],
    [["yarn", "serve"], "the `serve` script conventionally starts a server or a watcher"],
    [["yarn", "build"], null],
    [["bun", "dev"], "the `dev` script conventionally starts a server or a watcher"],
    [["bun", "run", "start"], "the `start` script conventionally starts a server or a watcher"],
    [["bun", "server.ts"], "`bun server.ts` runs a server script"],
    [["bun", "run", "server.ts"], "`bun server.ts` runs a server script"],
    [["bun", "run", "build.ts"], null],
    [["bun", "test"], null],
  ])("package scripts: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["node", "server.js"], "`node server.js` runs a server script"],
    [["nodejs", "server.js"], "`nodejs server.js` runs a server script"],
    [["tsx", "src/server.ts"], "`tsx src/server.ts` runs a server script"],
    [["ts-node", "server.ts"], "`ts-node server.ts` runs a server script"],
    [["deno", "run", "--allow-net", "server.ts"], "`deno server.ts` runs a server script"],
    [["deno", "server.ts"], "`deno server.ts` runs a server script"],
    [["deno", "run", "build.ts"], null],
    [["node", "dev-server.mjs"], "`node dev-server.mjs` runs a server script"],
    [["node", "server.cjs"], "`node server.cjs` runs a server script"],
    [["node", "server.jsx"], "`node server.jsx` runs a server script"],
    [["node", "server.tsx"], "`node server.tsx` runs a server script"],
    [["node", "server.mts"], "`node server.mts` runs a server script"],
    [["node", "Server.JS"], "`node Server.JS` runs a server script"],
    [["node", "dist/api-server"], "`node dist/api-server` runs a server script"],
    [["node", "server/index.js"], null],
    [["node", "webserver.js"], "`node webserver.js` runs a server script"],
    [["python", "devServer.py"], "`python devServer.py` runs a server script"],
    // "server" inside another word is not one.
    [["node", "observer.js"], null],
    [["node", "src/Observer.ts"], null],
    [["python", "preserver.py"], null],
    [["node", "bin/observer"], null],
    [["node", "server.json"], null],
    [["node", "server.test.js"], null],
    [["node", "server.spec.ts"], null],
    [["node", "scripts/build.js"], null],
    [["node"], null],
    [["node", "-"], null],
    // A flag's value is not the script; a flag without one is skipped alone.
    [["node", "-r", "dotenv/config", "server.js"], "`node server.js` runs a server script"],
    [["node", "--require", "dotenv/config", "server.js"], "`node server.js` runs a server script"],
    [["node", "--import", "tsx", "server.ts"], "`node server.ts` runs a server script"],
    [["node", "--loader", "ts-node/esm", "server.ts"], "`node server.ts` runs a server script"],
    [["node", "--experimental-loader", "ts-node/esm", "server.ts"], "`node server.ts` runs a server script"],
    [["node", "-C", "development", "server.js"], "`node server.js` runs a server script"],
    [["node", "--conditions", "development", "server.js"], "`node server.js` runs a server script"],
    [["node", "--env-file", ".env", "server.js"], "`node server.js` runs a server script"],
    [["node", "--inspect-port", "9229", "server.js"], "`node server.js` runs a server script"],
    [["node", "--enable-source-maps", "server.js"], "`node server.js` runs a server script"],
    [["node", "--", "server.js"], "`node server.js` runs a server script"],
    [["node", "--enable-source-maps", "--", "server.js"], "`node server.js` runs a server script"],
    // `-` reads the script from stdin: what follows is its argument, not the script.
    [["node", "-", "server.js"], null],
    // After `--` every argument is positional, even one that starts with a dash.
    [["node", "--", "-server.js"], "`node -server.js` runs a server script"],
    // Only deno and bun have a `run` subcommand: `node run` runs the file `run`.
    [["node", "run", "server.js"], null],
    [["node", "-r", "server.js", "build.js"], null],
    // Inline code, a syntax check or the test runner: the script argument is not run as a server.
    [["node", "-e", "require('./server.js')"], null],
    [["node", "--eval", "1", "server.js"], null],
    [["node", "-p", "1", "server.js"], null],
    [["node", "--print", "1", "server.js"], null],
    [["node", "--test", "server.js"], null],
    [["node", "-c", "server.js"], null],
    [["node", "--check", "server.js"], null],
  ])("script runners: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["python", "server.py"], "`python server.py` runs a server script"],
    [["python3", "app/server.py"], "`python app/server.py` runs a server script"],
    [["python3.12", "server.py"], "`python server.py` runs a server script"],
    [["python2.7", "server.py"], "`python server.py` runs a server script"],
    [["python310", "server.py"], "`python server.py` runs a server script"],
    [["py", "server.py"], "`python server.py` runs a server script"],
    [["/usr/bin/python3", "server.py"], "`python server.py` runs a server script"],
    [["python3.", "server.py"], null],
    [["python3.x", "server.py"], null],
    [["pythonw", "server.py"], null],
    [["mypy", "server.py"], null],
    [["pyright", "server.py"], null],
    [["cpython", "server.py"], null],
    [["python", "test_server.py"], null],
    [["python", "server_test.py"], null],
    [["python", "tests/test_server.py"], null],
    [["python", "build.py"], null],
    [["python"], null],
    [["python", "-W", "ignore", "server.py"], "`python server.py` runs a server script"],
    [["python", "-X", "dev", "server.py"], "`python server.py` runs a server script"],
    [["python", "-u", "server.py"], "`python server.py` runs a server script"],
    [["python", "-c", "import server"], null],
    [["python", "-c", "print(1)", "server.py"], null],
    [["python", "manage.py", "runserver"], "`manage.py runserver` starts a server"],
    [["python", "src/manage.py", "runserver", "8000"], "`manage.py runserver` starts a server"],
    [["python", "manage.py", "migrate"], null],
    [["python", "manage.py"], null],
    [["python", "other.py", "runserver"], null],
    [["python", "-m", "http.server"], "`python -m http.server` starts a server"],
    [["python3", "-m", "http.server", "8000"], "`python -m http.server` starts a server"],
    [["python2", "-m", "SimpleHTTPServer"], "`python -m SimpleHTTPServer` starts a server"],
    [["python", "-m", "uvicorn", "app:app"], "`python -m uvicorn` starts a server"],
    [["python", "-m", "gunicorn", "app:app"], "`python -m gunicorn` starts a server"],
    [["python", "-m", "hypercorn", "app:app"], "`python -m hypercorn` starts a server"],
    [["python", "-m", "daphne", "app:app"], "`python -m daphne` starts a server"],
    [["python", "-m", "httpxserver"], null],
    [["python", "-m", "my.http.server"], null],
    [["python", "-m", "uvicorn2"], null],
    [["python", "-m", "flask", "run"], "`python -m flask run` starts a server"],
    [["python", "-m", "streamlit", "run", "app.py"], "`python -m streamlit run` starts a server"],
    [["python", "-m", "flask", "routes"], null],
    [["python", "-m", "flask"], null],
    [["python", "-m", "pip", "run"], null],
    [["python", "-m", "django", "runserver"], "`python -m django runserver` starts a server"],
    [["python", "-m", "django", "migrate"], null],
    [["python", "-m", "flask", "runserver"], null],
    [["python", "-m", "pytest", "server.py"], null],
    [["python", "-m", "pytest", "manage.py", "runserver"], null],
    [["python", "-m"], null],
  ])("python: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["vite", "dev"], "`vite dev` starts a dev server (only `vite build` finishes)"],
    [["vite", "preview"], "`vite preview` starts a dev server (only `vite build` finishes)"],
    [["vite", "--open"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["vite", "build"], null],
    [["vite", "optimize"], null],
    [["vite", "--config", "vite.config.ts", "build"], null],
    [["vite", "-c", "vite.config.ts", "build"], null],
    [["vite", "--mode", "production", "build"], null],
    [["vite", "-m", "production", "build"], null],
    [["vite", "--port", "5173", "build"], null],
    [["vite", "--host", "0.0.0.0", "build"], null],
    [["vite", "--base", "/app/", "build"], null],
    [["vite", "--port", "5173"], "`vite` starts a dev server (only `vite build` finishes)"],
  ])("vite: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["docker", "compose", "up"], "`docker compose up` starts long-running services"],
    [["docker", "compose", "watch"], "`docker compose watch` starts long-running services"],
    [["podman", "compose", "up", "-d"], "`docker compose up` starts long-running services"],
    [["docker", "compose", "down"], null],
    [["docker", "compose", "build", "up"], null],
    [["docker", "up"], null],
    [["docker", "compose"], null],
    [["docker", "rm", "up"], null],
    [["docker", "compose", "-f", "compose.yml", "up"], "`docker compose up` starts long-running services"],
    [["docker", "compose", "--file", "compose.yml", "up"], "`docker compose up` starts long-running services"],
    [["docker", "compose", "-p", "cafe", "up"], "`docker compose up` starts long-running services"],
    [["docker", "compose", "--project-name", "cafe", "watch"], "`docker compose watch` starts long-running services"],
    [["docker", "--context", "remote", "compose", "up"], "`docker compose up` starts long-running services"],
    [["docker", "-H", "tcp://host:2375", "compose", "up"], "`docker compose up` starts long-running services"],
    [["docker", "--host", "tcp://host:2375", "compose", "up"], "`docker compose up` starts long-running services"],
    [["docker", "logs", "-f", "db"], "`docker logs --follow` never finishes"],
    [["docker", "logs", "--follow", "db"], "`docker logs --follow` never finishes"],
    [["docker", "logs", "-tf", "db"], "`docker logs --follow` never finishes"],
    [["docker", "compose", "logs", "--follow"], "`docker logs --follow` never finishes"],
    [["podman", "logs", "-f", "db"], "`docker logs --follow` never finishes"],
    [["docker", "logs", "db"], null],
    [["docker", "logs", "-n", "20", "db"], null],
    [["docker", "compose", "logs"], null],
    [["docker", "rm", "logs", "-f"], null],
    [["docker", "ps", "-a", "--filter", "status=exited", "-f", "name=db"], null],
    [["docker", "compose", "ps", "-f"], null],
    [["docker", "build", "-f", "Dockerfile", "."], null],
  ])("docker: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["tail", "-f", "log.txt"], "`tail --follow` never finishes"],
    [["tail", "-F", "log.txt"], "`tail --follow` never finishes"],
    [["tail", "-qf", "log.txt"], "`tail --follow` never finishes"],
    [["tail", "-n20f", "log.txt"], "`tail --follow` never finishes"],
    [["tail", "--follow", "log.txt"], "`tail --follow` never finishes"],
    [["tail", "--follow=name", "log.txt"], "`tail --follow` never finishes"],
    [["journalctl", "-f"], "`journalctl --follow` never finishes"],
    [["journalctl", "-u", "nginx", "--follow"], "`journalctl --follow` never finishes"],
    [["tail", "-n", "20", "log.txt"], null],
    [["tail", "f"], null],
    [["tail", "x-f"], null],
    [["tail", "--followers"], null],
    [["journalctl", "-u", "nginx"], null],
    [["tsc", "-w"], "`tsc -w` keeps watching"],
    [["tsc", "--watch"], "`--watch` keeps the command running"],
    [["tsc", "-p", "."], null],
    [["php", "-S", "localhost:8000"], "`php -S` starts a server"],
    [["php", "artisan", "test"], null],
    [["php", "-s", "index.php"], null],
    [["ruby", "-run", "-e", "httpd", ".", "-p", "8000"], "`ruby -run -e httpd` starts a server"],
    [["ruby", "-run", "-e", "cp", "a", "b"], null],
    [["ruby", "script.rb", "httpd"], null],
    [["nc", "-l", "8080"], "`nc -l` listens until stopped"],
    [["nc", "-lk", "8080"], "`nc -l` listens until stopped"],
    [["nc", "-vl", "8080"], "`nc -l` listens until stopped"],
    [["ncat", "-l", "8080"], "`ncat -l` listens until stopped"],
    [["netcat", "-l", "-p", "8080"], "`netcat -l` listens until stopped"],
    [["nc", "-z", "db", "5432"], null],
    [["nc", "my-ldap-host", "389"], null],
    [["nc", "l", "389"], null],
    [["sleep", "infinity"], "`sleep infinity` never finishes"],
    [["sleep", "5"], null],
    [["ls", "-f"], null],
    [["git", "log", "--follow", "a.ts"], null],
  ])("followers, watchers and listeners: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it.each<Row>([
    [["npx", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["pnpx", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["bunx", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["npx", "--yes", "next", "dev"], "`next dev` starts a long-running server"],
    [["npx", "-p", "next@14", "next", "dev"], "`next dev` starts a long-running server"],
    [["npx", "--package", "next@14", "next", "dev"], "`next dev` starts a long-running server"],
    [["npx", "-c", "build", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["npx", "--call", "build", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["npx", "--", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["npx", "--yes", "--", "http-server"], "`http-server` runs until stopped"],
    // After `--` the next word is the program, even one that starts with a dash.
    [["npx", "--", "-x", "vite"], null],
    [["npx"], null],
    [["npx", "--yes"], null],
    [["npx", "vite", "build"], null],
    [["npm", "exec", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["npm", "x", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["pnpm", "dlx", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["yarn", "exec", "--", "next", "start"], "`next start` starts a long-running server"],
    [["npm", "exec", "-p", "next@14", "next", "dev"], "`next dev` starts a long-running server"],
    [["npm", "install", "vite"], null],
    [["npm", "ci", "nodemon"], null],
    [["bundle", "exec", "rails", "server"], "`rails server` starts a long-running server"],
    [["bundle", "exec", "--keep-file-descriptors", "jekyll", "serve"], "`jekyll serve` starts a long-running server"],
    [["bundle", "exec", "rails", "test"], null],
    [["bundle", "install", "rails", "server"], null],
    [["env", "PORT=3000", "node", "server.js"], "`node server.js` runs a server script"],
    [["env", "_X=1", "a1=2", "X_Y=3", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["env", "-u", "HOME", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["env", "--unset", "HOME", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["env", "-C", "web", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["env", "--chdir", "web", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["env", "-i", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["env", "PORT=3000"], null],
    // Only assignments: env prints the environment, even when a value names a server.
    [["env", "PAGER=/usr/bin/top"], null],
    [["env"], null],
    // Not an assignment: the program `1X=2` (unknown), not a variable before `vite`.
    [["env", "1X=2", "vite"], null],
    [["env", "X-Y=2", "vite"], null],
    [["env", "=2", "vite"], null],
    [["nice", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["nice", "-n", "10", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["nice", "--adjustment", "10", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["nohup", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["time", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["setsid", "vite"], "`vite` starts a dev server (only `vite build` finishes)"],
    [["nice", "-n", "10", "vite", "build"], null],
    [["sudo", "vite"], null],
    [["xargs", "vite"], null],
  ])("launchers are looked through: %j → %j", (argv, reason) => {
    expect(longRunningReason(argv)).toBe(reason);
  });

  it("looks through at most four launchers, and nothing at all in an empty argv", () => {
    const launchers = ["nice", "nohup", "time", "setsid"];
    expect(longRunningReason([...launchers, "vite"])).toBe("`vite` starts a dev server (only `vite build` finishes)");
    expect(longRunningReason([...launchers, "nice", "vite"])).toBeNull();
    expect(longRunningReason([])).toBeNull();
  });
});
