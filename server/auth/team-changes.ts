// A change to the team (req X2) and its event, in one transaction (docs/auth.md, "Audit").
// Every change takes the `team` stream's row lock first — the transaction's first write, as
// every append's is (docs/architecture.md, "Appending") — so changes to the team are made
// one at a time, each on what the one before left: an invitation accepted twice at once makes
// one user, and no two changes together leave the team without an enabled admin.
import { withTransaction, type Db, type Tx } from "../db/pool";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import { TEAM_STREAM } from "../events/team-catalog";
import type { NewEvent } from "../events/types";

export interface TeamDeps {
  pool: Db;
  store: EventStore;
}

/** What a change decided: its answer and the events that record it (none when nothing changed). */
export interface TeamChange<T> {
  result: T;
  events: NewEvent[];
}

/** The person who made a change, as events name them. */
export function userActor(userId: string): Actor {
  return { kind: "user", id: userId };
}

/**
 * Runs `change` under the team's lock and appends its events in the same transaction. A
 * change that throws writes nothing; one that changed nothing (a repeat) records nothing.
 */
export async function changeTeam<T>(deps: TeamDeps, actor: Actor, change: (tx: Tx) => Promise<TeamChange<T>>): Promise<T> {
  // The stream exists before the first change locks it (its own statement: a write, so not in the change's transaction).
  await deps.pool.query(`INSERT INTO streams (id, type, version) VALUES ($1, 'team', 0) ON CONFLICT (id) DO NOTHING`, [TEAM_STREAM]);
  return withTransaction(deps.pool, async (tx) => {
    await tx.query(`SELECT version FROM streams WHERE id = $1 FOR UPDATE`, [TEAM_STREAM]);
    const { result, events } = await change(tx);
    // "any": the lock above makes this the only writer of the stream until commit.
    if (events.length) await deps.store.appendInTx(tx, TEAM_STREAM, "any", events, { actor }, { streamType: "team" });
    return result;
  });
}
