// The configuration's events: what a run executes with (req M6, in the session's stream, as
// it starts) and an admin's changes to a project's record or the server's settings (in the
// configuration's own streams; docs/configuration.md).
import { z } from "zod";
import { defineEvent } from "./registry";

const ZJson = z.json();

export const configCatalog = {
  /** The configuration a run executes with (req M6), recorded as its session starts. */
  RuntimeContextRecorded: defineEvent({
    version: 1,
    schema: z.object({
      runId: z.string().min(1),
      createdAt: z.iso.datetime({ offset: true }),
      /** Where the configuration came from: the repository's `.catcafe/` at the base commit. */
      source: z.object({
        dir: z.string(),
        commit: z.string().regex(/^[0-9a-f]{40}$/),
        files: z.array(z.string()),
        configVersion: z.string(),
      }),
      /** Global settings as they applied (timeouts, retry policy, rate limit, defaults). */
      settings: ZJson,
      /** projects.json as it applied. */
      project: ZJson,
      /** role → the agent that plays it, from `.catcafe/` (config) or the project record. */
      roles: z.record(z.string(), z.object({ agentId: z.string(), source: z.enum(["config", "project"]) })),
      /** agent id → agent, shell, brain and FSM snapshot; secrets redacted, key variables by name only. */
      agents: z.record(z.string(), ZJson),
      /** The MCP servers handed to the agent CLIs (as TaskStarted records them; absent before they existed). */
      mcpServers: z.array(ZJson).optional(),
    }),
    summary: (d) =>
      `Runtime context ${d.runId}: ${Object.entries(d.roles)
        .map(([role, a]) => `${role}=${a.agentId}`)
        .join(", ")} (.catcafe ${d.source.configVersion} at ${d.source.commit.slice(0, 10)})`,
  }),
  /**
   * An admin changed configuration in the dashboard or the API: a project's record
   * (stream `config-project-<id>`) or the server's settings overrides (`config-server`).
   * Each change names the path and the values before and after; a revert is a change too.
   */
  ConfigChanged: defineEvent({
    version: 1,
    schema: z.object({
      scope: z.enum(["project", "server"]),
      projectId: z.string().nullable(),
      changes: z
        .array(z.object({ path: z.array(z.union([z.string(), z.number()])).min(1), from: ZJson.optional(), to: ZJson.optional() }))
        .min(1),
      /** The version (in this stream) of the change this one undoes. */
      revertOf: z.number().int().positive().optional(),
    }),
    summary: (d) =>
      `${d.scope === "server" ? "Server settings" : `Project ${d.projectId}`}${d.revertOf ? ` (revert of #${d.revertOf})` : ""}: ${d.changes
        .map((c) => `${c.path.join(".")} ${JSON.stringify(c.from ?? null)} → ${JSON.stringify(c.to ?? null)}`)
        .join("; ")}`,
  }),
} as const;
