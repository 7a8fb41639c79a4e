// OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp server): POST
// /v1/chat/completions with stream: true; the answer comes as `data: {chunk}` events with
// choices[0].delta.content, an optional usage-only chunk (stream_options.include_usage),
// then `data: [DONE]`.
import { z } from "zod";
import { conversationFor } from "./conversation";
import { providerErrorDetail } from "./errors";
import { apiUrl, parseEventJson, StreamFormatError, type BrainProtocol, type StreamSignal } from "./protocol";

const PROVIDER = "OpenAI-compatible endpoint";

const ZChunk = z.object({
  // vLLM ends with a usage chunk whose choices are null; others leave them out.
  choices: z
    .array(
      z.object({
        index: z.number().optional(),
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({
      prompt_tokens: z.number().optional(),
      completion_tokens: z.number().optional(),
      // The part of prompt_tokens read from OpenAI's automatic prefix cache.
      prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
    })
    .nullish(),
  error: z.unknown().optional(),
});

export const openaiProtocol: BrainProtocol = {
  provider: PROVIDER,
  genAiProvider: "openai",
  callUrl: (baseUrl) => apiUrl(baseUrl, "/chat/completions"),
  modelsUrl: (baseUrl) => apiUrl(baseUrl, "/models"),
  headers: (apiKey) => ({
    "content-type": "application/json",
    accept: "text/event-stream",
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  }),
  requestBody(params, request) {
    const system = params.systemPrompt ? [{ role: "system", content: params.systemPrompt }] : [];
    return {
      model: params.model,
      // No marker: OpenAI caches a prompt's prefix by itself; the stable part first is what it needs.
      messages: [...system, ...conversationFor(request).map(({ role, content }) => ({ role, content }))],
      stream: true,
      stream_options: { include_usage: true },
      ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
      ...(params.maxTokens === undefined ? {} : { max_tokens: params.maxTokens }),
    };
  },
  read(event) {
    if (event.data.trim() === "[DONE]") return [{ kind: "done" }];
    const json = parseEventJson(PROVIDER, event);
    const chunk = ZChunk.safeParse(json);
    if (!chunk.success)
      throw new StreamFormatError(`${PROVIDER} streamed an unexpected chunk: ${chunk.error.issues[0]?.message ?? "wrong shape"}`);
    if (chunk.data.error !== undefined && chunk.data.error !== null) return [{ kind: "error", detail: providerErrorDetail(json) }];
    const signals: StreamSignal[] = [];
    // One completion is asked for (n = 1): choice 0 is the answer.
    const choice = chunk.data.choices?.find((c) => (c.index ?? 0) === 0);
    const text = choice?.delta?.content;
    if (text) signals.push({ kind: "text", text });
    if (choice?.finish_reason) signals.push({ kind: "finished" });
    const usage = chunk.data.usage;
    if (usage) {
      const cached = usage.prompt_tokens_details?.cached_tokens ?? undefined;
      signals.push({ kind: "usage", inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, cachedInputTokens: cached });
    }
    return signals;
  },
};
