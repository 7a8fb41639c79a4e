// The dashboard's idempotency keys (docs/api.md, "Repeating a command"): one key per intent.
// An intent is a mutation and its input: the same one sent again while the first is under way
// or within INTENT_WINDOW_MS of its answer (a double click, a click on a button not yet
// disabled, a retry) gets the same key, so the server carries it out once and answers both the
// same; after that window the same input is a new intent (posting "ok" again a minute later).
/** How long after its answer the same mutation and input still count as the same intent. */
export const INTENT_WINDOW_MS = 10_000;

/** A random key (a version 4 UUID) from getRandomValues, which, unlike randomUUID, works on plain http too. */
export function newIntentKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface Intent {
  key: string;
  /** Calls under way with this key. */
  pending: number;
  /** When the last of them was answered (0 while one is under way). */
  settledAt: number;
}

export class IntentKeys {
  private readonly intents = new Map<string, Intent>();

  constructor(
    private readonly windowMs = INTENT_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key for a call of `path` with `input`, and what to call once it is answered. */
  take(path: string, input: unknown): { key: string; settle: () => void } {
    const id = `${path}\n${JSON.stringify(input ?? null)}`;
    this.forgetOld();
    let intent = this.intents.get(id);
    if (!intent) this.intents.set(id, (intent = { key: newIntentKey(), pending: 0, settledAt: 0 }));
    intent.pending++;
    const taken = intent;
    let settled = false;
    return {
      key: taken.key,
      settle: () => {
        if (settled) return;
        settled = true;
        taken.pending--;
        if (taken.pending === 0) taken.settledAt = this.now();
      },
    };
  }

  private forgetOld(): void {
    const now = this.now();
    for (const [id, intent] of this.intents) if (intent.pending === 0 && now - intent.settledAt > this.windowMs) this.intents.delete(id);
  }
}
