// People in text (req X2): events name a person by actor label, `user:<uuid>`; what people
// read names them. Shared by the server's responses (server/auth/names.ts) and the export.
export const USER_LABEL = /user:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const EXACT_LABEL = new RegExp(`^${USER_LABEL.source}$`, "i");

/** How a person no longer known (deleted) is named. */
export const FORMER_MEMBER = "a former member";

/** The user labels inside `text`. */
export function userLabelsIn(text: string): string[] {
  return text.includes("user:") ? [...text.matchAll(USER_LABEL)].map((m) => m[0].toLowerCase()) : [];
}

export function isUserLabel(text: string): boolean {
  return EXACT_LABEL.test(text);
}

/** `text` with each user label inside it replaced by the person's name (or {@link FORMER_MEMBER}). */
export function nameLabelsIn(text: string, names: Record<string, string>): string {
  if (!text.includes("user:")) return text;
  return text.replace(USER_LABEL, (label) => names[label.toLowerCase()] ?? FORMER_MEMBER);
}
