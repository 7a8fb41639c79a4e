import { startEmbeddedPostgres } from "../../server/db/embedded";
const pg = await startEmbeddedPostgres({ dataDir: "/tmp/pgtry/data", port: 55432, password: "pw", log: console.log });
await pg.createDatabase("scratch");
console.log(pg.urlFor("scratch"));
setInterval(() => {}, 1 << 30);
