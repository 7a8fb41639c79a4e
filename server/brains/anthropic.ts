// Anthropic messages: POST /v1/messages with stream: true, the key in x-api-key and the API
// version in anthropic-version. The stream is message_start (input usage), content blocks
// whose text_delta carry the answer, message_delta (stop reason, output usage),
// message_stop; ping keeps it alive and `error` reports a failure mid-stream.
import { z } from "zod";
import { conversationFor, type ChatTurn } from "./conversation";
import { providerErrorDetail } from "./errors";
import { apiUrl, parseEventJson, StreamFormatError, type BrainProtocol, type StreamSignal } from "./protocol";

const PROVIDER = "Anthropic";
export const ANTHROPIC_VERSION = "2023-06-01";
/** max_tokens is required by the API; this is what a brain without maxTokens asks for. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

const ZUsage = z.object({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
type Usage = z.infer<typeof ZUsage>;

const ZEvent = z.object({ type: z.string().optional() });
const ZMessageStart = z.object({ message: z.object({ usage: ZUsage.nullish() }) });
const ZBlockDelta = z.object({ delta: z.object({ type: z.string(), text: z.string().optional() }) });
const ZMessageDelta = z.object({ delta: z.object({ stop_reason: z.string().nullish() }).nullish(), usage: ZUsage.nullish() });

function usageSignal(usage: Usage | null | undefined): StreamSignal[] {
  if (!usage) return [];
  const input = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens].filter(
    (n): n is number => typeof n === "number",
  );
  return [
    {
      kind: "usage",
      inputTokens: input.length ? input.reduce((a, b) => a + b, 0) : undefined,
      outputTokens: usage.output_tokens ?? undefined,
      cachedInputTokens: usage.cache_read_input_tokens ?? undefined,
      cacheCreationInputTokens: usage.cache_creation_input_tokens ?? undefined,
    },
  ];
}

/**
 * Where a cached prefix ends (docs/scaling.md, "Prompt economics"): Anthropic caches the
 * request up to each block so marked (at most four), and bills a later request's matching
 * prefix as a cache read.
 */
const CACHE_MARK = { cache_control: { type: "ephemeral" } } as const;

/**
 * A turn as content blocks, each cut marked: the end of the stable part and the end of the
 * thread (with the system prompt, three breakpoints of Anthropic's four); what comes after
 * them, this call's instruction and what changed, unmarked.
 */
function messageFor(turn: ChatTurn) {
  const cuts = [...new Set([turn.stableChars, turn.threadEndChars])]
    .filter((n): n is number => n !== undefined && n > 0 && n <= turn.content.length)
    .sort((a, b) => a - b);
  if (!cuts.length) return { role: turn.role, content: turn.content };
  const blocks: Array<{ type: "text"; text: string; cache_control?: { type: "ephemeral" } }> = [];
  let from = 0;
  for (const cut of cuts) {
    blocks.push({ type: "text", text: turn.content.slice(from, cut), ...CACHE_MARK });
    from = cut;
  }
  const rest = turn.content.slice(from);
  if (rest) blocks.push({ type: "text", text: rest });
  return { role: turn.role, content: blocks };
}

function shaped<T>(schema: z.ZodType<T>, json: unknown, type: string): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new StreamFormatError(`${PROVIDER} streamed an unexpected ${type} event: ${parsed.error.issues[0]?.message ?? "wrong shape"}`);
  return parsed.data;
}

export const anthropicProtocol: BrainProtocol = {
  provider: PROVIDER,
  genAiProvider: "anthropic",
  callUrl: (baseUrl) => apiUrl(baseUrl, "/messages"),
  modelsUrl: (baseUrl, model) => apiUrl(baseUrl, `/models/${encodeURIComponent(model)}`),
  headers: (apiKey) => ({
    "content-type": "application/json",
    accept: "text/event-stream",
    "anthropic-version": ANTHROPIC_VERSION,
    ...(apiKey ? { "x-api-key": apiKey } : {}),
  }),
  requestBody(params, request) {
    return {
      model: params.model,
      max_tokens: params.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      messages: conversationFor(request).map(messageFor),
      stream: true,
      // The system prompt is the same on every call of the agent: marked, it is read from the cache.
      ...(params.systemPrompt ? { system: [{ type: "text", text: params.systemPrompt, ...CACHE_MARK }] } : {}),
      ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
    };
  },
  read(event) {
    const json = parseEventJson(PROVIDER, event);
    const type = shaped(ZEvent, json, event.event).type ?? event.event;
    switch (type) {
      case "message_start":
        return usageSignal(shaped(ZMessageStart, json, type).message.usage);
      case "content_block_delta": {
        // thinking_delta, signature_delta and input_json_delta are not part of the answer.
        const { delta } = shaped(ZBlockDelta, json, type);
        return delta.type === "text_delta" && delta.text ? [{ kind: "text", text: delta.text }] : [];
      }
      case "message_delta": {
        const data = shaped(ZMessageDelta, json, type);
        const stopped: StreamSignal[] = data.delta?.stop_reason ? [{ kind: "finished" }] : [];
        return [...usageSignal(data.usage), ...stopped];
      }
      case "message_stop":
        return [{ kind: "done" }];
      case "error":
        return [{ kind: "error", detail: providerErrorDetail(json) }];
      default:
        // ping, content_block_start/stop, and event types added after this was written.
        return [];
    }
  },
};
