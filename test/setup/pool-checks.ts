// Every integration and e2e file: no code asked its pool for a second connection inside one
// of that pool's transactions (server/db/pool.ts, CATCAFE_POOL_CHECKS). Checked after the
// file, since such a refusal may have been caught and logged by the code that made it.
import { afterAll } from "vitest";
import { takeNestedPoolUses } from "../../server/db/pool";

afterAll(() => {
  const uses = takeNestedPoolUses();
  if (uses.length > 0) throw new Error(`${uses.length} connection(s) asked of a pool inside its own transaction; the first:\n${uses[0]}`);
});
