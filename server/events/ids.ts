// Ids of rows that are inserted into an index in the order they are made: events and steps.
import { v7 as uuidv7 } from "uuid";

/**
 * A new event's (or step's) id: a time-ordered UUID (version 7), so that each insert into
 * the id's index lands on its newest leaf page rather than a random one (a random page is
 * read, dirtied and, first after each checkpoint, written whole to the WAL).
 */
export function timeOrderedId(): string {
  return uuidv7();
}
