// People by name wherever they are shown (req X2): a response that names people by their
// actor label (`user:<uuid>`) gets their names in one query. Labels inside text (an event's
// one-line summary, "Mode switched … by user:…") are replaced by the name; a field that is
// exactly a label stays (clients key on it) and is named by the `names` map beside it. A
// disabled user keeps their name; one no longer known reads as "a former member".
import { isUserLabel, nameLabelsIn as replaceLabels, userLabelsIn } from "../../lib/people";
import type { PrismaClient } from "../db/generated/client";
import { userNames } from "./users";

/** Every user label in `value` (strings anywhere in it, as they are or inside text). */
function collectLabels(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 64) return;
  if (typeof value === "string") {
    for (const label of userLabelsIn(value)) into.add(label);
  } else if (Array.isArray(value)) {
    for (const v of value) collectLabels(v, into, depth + 1);
  } else if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    for (const v of Object.values(value)) collectLabels(v, into, depth + 1);
  }
}

/** `text` with each user label inside it replaced by the person's name; a text that is exactly a label stays. */
export function nameLabelsIn(text: string, names: Record<string, string>): string {
  return isUserLabel(text) ? text : replaceLabels(text, names);
}

function replaceIn<T>(value: T, names: Record<string, string>, depth = 0): T {
  if (depth > 64) return value;
  if (typeof value === "string") return nameLabelsIn(value, names) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => replaceIn(v, names, depth + 1)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceIn(v, names, depth + 1)])) as T;
  }
  return value;
}

/**
 * `value` with the people it names resolved: labels inside text replaced by names, and the
 * names of every label (and of `also`, e.g. actor fields of other shapes) for the client.
 */
export async function withUserNames<T>(
  prisma: PrismaClient,
  value: T,
  also: Iterable<string> = [],
): Promise<{ value: T; names: Record<string, string> }> {
  const labels = new Set<string>(also);
  collectLabels(value, labels);
  const names = await userNames(prisma, labels);
  return { value: replaceIn(value, names), names };
}
