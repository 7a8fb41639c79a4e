// The scripted brain: replays a script of replies and faults, one entry per invocation of a
// role. It powers the demo and the tests (every failure class on demand, no network) and is
// labelled simulated wherever its output shows.
import fs from "node:fs/promises";
import path from "node:path";
import {
  relativePathProblem,
  ZScriptedAgentConfig,
  type ScriptedAgentConfig,
  type ScriptedAgentConfigInput,
  type ScriptEntry,
  type ScriptFaultEntry,
} from "./config";
import { standInReply } from "./stand-ins";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type Agent, type AgentRequest, type AgentResponse } from "./types";

/** How many onChunk calls a reply is streamed in (fewer for very short replies). */
const CHUNKS_PER_REPLY = 6;
/** What a dropped connection had delivered: the start of a review, so it looks parseable. */
const DISCONNECT_TEXT =
  'I reviewed the change set against the task.\n{"decision": "changes_requested", "findings": [{"severity": "major", "file": "src/index.ts", "message": "The handler ignores ';
const DEFAULT_DISCONNECT_CHARS = 64;
/** A reply cut off mid-object: the call succeeds, schema validation must then fail it. */
const INVALID_JSON_TEXT = '{"decision": "approve", ';
const OVERSIZED_CHUNK = "simulated runaway output\n".repeat(Math.ceil((64 * 1024) / 25)).slice(0, 64 * 1024);
/** An oversized failure keeps only this much of what streamed, for diagnosis. */
const OVERSIZED_PARTIAL_CHARS = 4 * 1024;
/** setTimeout's largest delay; longer waits re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type WaitOutcome = "elapsed" | "aborted" | "deadline";

export class ScriptedAgent implements Agent {
  readonly kind = "scripted";
  readonly simulated = true;
  readonly fileWrites = "workspace" as const;
  // It stands in for a brain or an agent CLI (the demo, the bench), so it is sent what they are.
  readonly readsThread = true;
  readonly id: string;
  readonly name: string;
  private readonly config: ScriptedAgentConfig;

  constructor(config: ScriptedAgentConfigInput) {
    this.config = ZScriptedAgentConfig.parse(config);
    this.id = this.config.id;
    this.name = this.config.name ?? this.config.id;
  }

  /**
   * The entry invocation `n` plays: byStage[stage][iteration − 1] for a staged step whose
   * stage the script names (byStage[`<stage>_modify`] first in a modify session), else
   * byOutput[output][n] when the script has replies for that output, else responses[n]; the
   * last one past the end.
   */
  entryFor(invocation: number, output?: string, stage?: AgentRequest["stage"]): ScriptEntry {
    const byStage = stage
      ? ((stage.modifying ? this.config.byStage?.[`${stage.name}_modify`] : undefined) ?? this.config.byStage?.[stage.name])
      : undefined;
    const responses = byStage ?? (output ? this.config.byOutput?.[output] : undefined) ?? this.config.responses;
    const index = Math.min(Math.max(0, Math.floor(byStage && stage ? stage.iteration - 1 : invocation)), responses.length - 1);
    const entry = responses[index];
    if (!entry) throw new AgentError("internal_error", `scripted agent ${this.id} has an empty script`, false);
    return entry;
  }

  async invoke(request: AgentRequest): Promise<AgentResponse> {
    const entry = this.entryFor(request.invocation, request.output, request.stage);
    if (request.signal.aborted) throw interrupted("aborted", "");
    if (!(request.deadline > Date.now())) throw interrupted("deadline", ""); // NaN too
    if ("fault" in entry) return playFault(entry, request);
    if ("standIn" in entry) {
      const made = standInReply(entry.standIn, request);
      if (made.files) await applyFiles(request.workspace, made.files, request.signal);
      await stream(made.reply, entry.chunkDelayMs, request);
      return { text: made.reply };
    }
    if (entry.files) await applyFiles(request.workspace, entry.files, request.signal);
    await stream(entry.reply, entry.chunkDelayMs, request);
    return { text: entry.reply };
  }
}

async function playFault(entry: ScriptFaultEntry, request: AgentRequest): Promise<AgentResponse> {
  const { message } = entry;
  switch (entry.fault) {
    case "disconnect": {
      const text = cannedText(DISCONNECT_TEXT, entry.afterChars ?? DEFAULT_DISCONNECT_CHARS);
      await stream(text, 0, request);
      throw new AgentError(
        "provider_network_error",
        message ?? `connection reset by peer after ${text.length} characters (simulated disconnect)`,
        true,
        text,
      );
    }
    case "timeout":
      throw interrupted((await wait(Infinity, request)) === "aborted" ? "aborted" : "deadline", "");
    case "rate_limit":
      throw new AgentError("provider_rate_limit", message ?? "HTTP 429 Too Many Requests (simulated)", true, "", entry.retryAfterMs);
    case "auth":
      throw new AgentError("provider_auth_error", message ?? "HTTP 401 Unauthorized: invalid API key (simulated)", false);
    case "server_error":
      throw new AgentError("provider_network_error", message ?? "HTTP 500 Internal Server Error (simulated)", true);
    case "invalid_json":
      await stream(INVALID_JSON_TEXT, 0, request);
      return { text: INVALID_JSON_TEXT };
    case "oversized":
      return overflow(message, request);
    default: {
      const unhandled: never = entry.fault;
      throw new AgentError("internal_error", `unknown scripted fault ${String(unhandled)}`, false);
    }
  }
}

/**
 * Streams more than MAX_AGENT_OUTPUT_BYTES through onChunk, one reused chunk at a time (never
 * holding more than a chunk), then fails as a real agent's runaway output would.
 */
async function overflow(message: string | undefined, request: AgentRequest): Promise<never> {
  const partial = OVERSIZED_CHUNK.slice(0, OVERSIZED_PARTIAL_CHARS);
  const chunkBytes = Buffer.byteLength(OVERSIZED_CHUNK);
  for (let sent = 0; sent <= MAX_AGENT_OUTPUT_BYTES; sent += chunkBytes) {
    // Yield between chunks so a cancel is seen at once.
    await new Promise((resolve) => setImmediate(resolve));
    if (request.signal.aborted) throw interrupted("aborted", partial);
    request.onChunk?.(OVERSIZED_CHUNK);
  }
  throw new AgentError("tool_error", message ?? `output exceeded ${MAX_AGENT_OUTPUT_BYTES} bytes`, false, partial);
}

/** Sends `text` through onChunk in order, pausing `delayMs` before each chunk. */
async function stream(text: string, delayMs: number, request: AgentRequest): Promise<void> {
  let sent = "";
  for (const chunk of splitIntoChunks(text)) {
    if (delayMs > 0) {
      const outcome = await wait(delayMs, request);
      if (outcome !== "elapsed") throw interrupted(outcome, sent);
    } else if (request.signal.aborted) {
      throw interrupted("aborted", sent);
    }
    request.onChunk?.(chunk);
    sent += chunk;
  }
}

export function splitIntoChunks(text: string, parts = CHUNKS_PER_REPLY): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const chunks: string[] = [];
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + size, text.length);
    // Never split a surrogate pair across two chunks.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

function cannedText(text: string, length: number): string {
  return text.repeat(Math.ceil(length / text.length)).slice(0, length);
}

/** Waits `ms`, but no longer than the deadline and never past an abort. */
function wait(ms: number, { signal, deadline }: Pick<AgentRequest, "signal" | "deadline">): Promise<WaitOutcome> {
  if (signal.aborted) return Promise.resolve("aborted");
  const untilDeadline = deadline - Date.now();
  if (!(untilDeadline > 0)) return Promise.resolve("deadline"); // NaN too
  const outcome: WaitOutcome = ms < untilDeadline ? "elapsed" : "deadline";
  const end = Date.now() + Math.max(0, Math.min(ms, untilDeadline));
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: WaitOutcome) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onAbort = () => finish("aborted");
    const arm = () => {
      timer = setTimeout(() => (Date.now() >= end ? finish(outcome) : arm()), Math.min(end - Date.now(), MAX_TIMER_MS));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    arm();
  });
}

function interrupted(outcome: "aborted" | "deadline", partialOutput: string): AgentError {
  return outcome === "aborted"
    ? new AgentError("cancelled", "invocation cancelled", false, partialOutput)
    : new AgentError("timeout", "no answer before the deadline (simulated)", true, partialOutput);
}

// --- files -----------------------------------------------------------------------------

function refused(relativePath: string, why: string): AgentError {
  return new AgentError("tool_error", `refused path "${relativePath}": ${why}`, false);
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (relative.split(path.sep)[0] !== ".." && !path.isAbsolute(relative));
}

/** The real path of `p`, or of its nearest existing ancestor when `p` does not exist yet. */
async function realpathOfExistingAncestor(p: string): Promise<string> {
  for (let current = p; ; current = path.dirname(current)) {
    try {
      return await fs.realpath(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || path.dirname(current) === current) throw err;
    }
  }
}

/**
 * Writes (string) or deletes (null) files in the workspace. Every path is checked before any
 * file is touched, so one bad path changes nothing: relative, no '..', and not leaving the
 * workspace through a symlink.
 */
async function applyFiles(workspace: string, files: Record<string, string | null>, signal: AbortSignal): Promise<void> {
  let root: string;
  try {
    root = await fs.realpath(workspace);
  } catch (err) {
    throw new AgentError("internal_error", `workspace not found: ${workspace} (${(err as Error).message})`, false);
  }
  const planned: { relativePath: string; target: string; content: string | null }[] = [];
  for (const [relativePath, content] of Object.entries(files)) {
    const problem = relativePathProblem(relativePath);
    if (problem) throw refused(relativePath, problem);
    const target = path.resolve(root, relativePath);
    if (!isInside(root, target) || target === root) throw refused(relativePath, "leaves the workspace");
    let parent: string;
    try {
      parent = await realpathOfExistingAncestor(path.dirname(target));
    } catch (err) {
      throw refused(relativePath, (err as Error).message);
    }
    if (!isInside(root, parent)) throw refused(relativePath, "leaves the workspace through a symlink");
    const existing = await fs.lstat(target).catch(() => null);
    if (existing?.isSymbolicLink() && content !== null) throw refused(relativePath, "is a symlink");
    if (existing?.isDirectory()) throw refused(relativePath, "is a directory");
    planned.push({ relativePath, target, content });
  }
  for (const { relativePath, target, content } of planned) {
    if (signal.aborted) throw interrupted("aborted", "");
    try {
      if (content === null) {
        await fs.rm(target, { force: true });
      } else {
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.writeFile(target, content);
      }
    } catch (err) {
      throw new AgentError(
        "tool_error",
        `could not ${content === null ? "delete" : "write"} "${relativePath}": ${(err as Error).message}`,
        false,
      );
    }
  }
}
