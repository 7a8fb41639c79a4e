// Runs a settings section's read as the visitor: its data, or "forbidden" when the
// visitor's role may not read it (the procedure decides, not the page).
import { trpcCode } from "../../_lib/page-context";

export async function readSection<T>(read: () => Promise<T>): Promise<{ data: T; forbidden: false } | { data: null; forbidden: true }> {
  try {
    return { data: await read(), forbidden: false };
  } catch (err) {
    if (trpcCode(err) === "FORBIDDEN") return { data: null, forbidden: true };
    throw err;
  }
}
