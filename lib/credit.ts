// Who made a version of a Forge artifact, as the Forge page and `catcafe forge status` say it
// (req F2): a person's edit is theirs; an agent's redraft that kept (merged in) people's edits
// is credited to them too — "agent, with Ann's edit kept". Actor labels (`user:<id>`) are
// shown by name where the caller resolved them (forge.status returns `names`).

export interface VersionMaker {
  kind: "draft" | "edit";
  by: string;
  keptEditsBy: string[];
}

const nameOf = (label: string, names: Record<string, string>) => names[label] ?? label;

function listed(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** "agent", "agent, with Ann's edit kept", "agent, with Ann's and Bo's edits kept", or "edited by Ann". */
export function versionCredit(v: VersionMaker, names: Record<string, string>): string {
  if (v.kind === "edit") return `edited by ${nameOf(v.by, names)}`;
  if (!v.keptEditsBy.length) return "agent";
  const people = v.keptEditsBy.map((l) => `${nameOf(l, names)}'s`);
  return `agent, with ${listed(people)} edit${people.length > 1 ? "s" : ""} kept`;
}
