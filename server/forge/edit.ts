// A person's edit of a stage's draft (req F2, F4): Forge's own command, decided on the task
// as the engine folds it and routed to here where the engine is composed
// (server/task-engine.ts). The blob is stored before the decision (server/tasks/forge.ts).
import { AppError } from "../errors";
import type { BlobRef } from "../events/blobs";
import { currentState } from "../workflow/transition";
import { requireActive, type DecideContext, type Emitted, type TaskState } from "../workflow/engine";
import { parseArtifact } from "./artifacts";
import type { Pipeline } from "./state";

/** A person's edit of a stage's draft at its gate (the blob already stored). */
export interface EditArtifact {
  type: "EditArtifact";
  path: string;
  content: string;
  hash: string;
  blob: BlobRef;
  baseHash: string | null;
}

/** Forge's commands, decided beside the engine's. */
export type ForgeCommand = EditArtifact;

/** The stage whose artifact `path` is, in a staged workflow. */
function stageOwning(ctx: DecideContext<Pipeline>, path: string): string | undefined {
  return Object.entries(ctx.definition.stages ?? {}).find(([, s]) => s.artifacts.includes(path))?.[0];
}

/**
 * A person's edit of a draft, taken while the stage waits for a person (its gate, or a
 * stop). A completed stage's artifacts are immutable: the write is refused and the refusal
 * recorded (the caller appends it, then reports the refusal). An edit made on another
 * version than the current one is stale.
 */
export function editArtifact(state: TaskState<Pipeline>, command: EditArtifact, ctx: DecideContext<Pipeline>): Emitted[] {
  const active = requireActive(state);
  const stage = stageOwning(ctx, command.path);
  if (!stage) throw new AppError("INVALID_INPUT", `"${command.path}" is no artifact of workflow ${ctx.definition.id}`);
  if (active.stages.completed.includes(stage)) {
    return [
      {
        type: "ArtifactWriteRefused",
        data: { stage, by: "person", paths: [command.path], reason: `stage ${stage} is complete: its artifacts are immutable` },
      },
    ];
  }
  const spec = currentState(ctx.definition, active);
  if (spec.type !== "wait" || spec.stage !== stage)
    throw new AppError(
      "CONFLICT",
      `${command.path} can be edited while the ${stage} draft waits for a person; the session is in "${active.fsm}"`,
      { state: active.fsm },
    );
  const current = active.pipeline.artifacts[command.path]?.hash ?? null;
  if (command.baseHash !== current)
    throw new AppError(
      "CONFLICT",
      `stale edit: ${command.path} changed since it was opened (it is now ${current?.slice(0, 12) ?? "absent"})`,
      {
        current,
      },
    );
  if (command.hash === current) throw new AppError("INVALID_INPUT", "the edit changes nothing");
  const { json, problems } = parseArtifact(command.path, command.content);
  return [
    {
      type: "ArtifactEdited",
      data: {
        stage,
        path: command.path,
        baseHash: command.baseHash,
        hash: command.hash,
        blob: command.blob,
        size: command.blob.size,
        problems,
        ...(json !== undefined ? { json } : {}),
      },
    },
  ];
}
