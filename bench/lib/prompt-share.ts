// The share of a session's prompt bytes a provider's prefix cache could serve (docs/scaling.md,
// "Prompt economics"): from a session's second call on, each prompt's longest common prefix
// with any prompt sent earlier in that session, in bytes, summed over those calls and divided
// by their total bytes. Anthropic and OpenAI both cache by exact prefix, so this is the
// ceiling of what their caches can read.

/** Bytes the two share from their start. */
export function commonPrefixBytes(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export interface PromptShare {
  /** Calls counted: every call of the session but its first. */
  calls: number;
  /** Their prompt bytes. */
  bytes: number;
  /** Of those, the bytes equal to a prefix already sent in the session. */
  cacheableBytes: number;
  /** cacheableBytes / bytes (0 when nothing was counted). */
  share: number;
}

/** The cacheable share of one session's prompts, in the order they were sent. */
export function cacheableShare(prompts: readonly string[]): PromptShare {
  const sent: Buffer[] = [];
  let bytes = 0;
  let cacheableBytes = 0;
  for (const prompt of prompts) {
    const buf = Buffer.from(prompt, "utf8");
    if (sent.length) {
      bytes += buf.length;
      cacheableBytes += Math.max(...sent.map((earlier) => commonPrefixBytes(earlier, buf)));
    }
    sent.push(buf);
  }
  return { calls: Math.max(0, prompts.length - 1), bytes, cacheableBytes, share: bytes ? cacheableBytes / bytes : 0 };
}

/** Several sessions' shares added up (bytes-weighted). */
export function combinedShare(sessions: readonly PromptShare[]): PromptShare {
  const calls = sessions.reduce((n, s) => n + s.calls, 0);
  const bytes = sessions.reduce((n, s) => n + s.bytes, 0);
  const cacheableBytes = sessions.reduce((n, s) => n + s.cacheableBytes, 0);
  return { calls, bytes, cacheableBytes, share: bytes ? cacheableBytes / bytes : 0 };
}
