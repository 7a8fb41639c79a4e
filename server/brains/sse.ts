// An incremental parser for server-sent events (the WHATWG event-stream format) as the model
// providers stream them. Network chunks split lines, and even a CRLF, anywhere: text is fed
// as it arrives and whole events come out.

export interface SseEvent {
  /** The `event:` field, "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
}

export class SseParser {
  private pending = "";
  private eventName = "";
  private dataLines: string[] = [];
  private hasData = false;

  /** Feeds decoded text; returns the events it completed, in order. */
  push(text: string): SseEvent[] {
    this.pending += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.pending.length; i++) {
      const c = this.pending.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (c === 0x0d && i === this.pending.length - 1) break;
      this.line(this.pending.slice(start, i), events);
      if (c === 0x0d && this.pending.charCodeAt(i + 1) === 0x0a) i++;
      start = i + 1;
    }
    this.pending = this.pending.slice(start);
    return events;
  }

  /** Characters of an unfinished line held back (to bound memory on a stream without newlines). */
  get bufferedLength(): number {
    return this.pending.length + this.dataLines.reduce((n, l) => n + l.length, 0);
  }

  /** End of stream: a last event whose blank line never came is dropped, as the format says. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.pending.endsWith("\r")) this.line(this.pending.slice(0, -1), events);
    this.pending = "";
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.hasData) events.push({ event: this.eventName || "message", data: this.dataLines.join("\n") });
      this.eventName = "";
      this.dataLines = [];
      this.hasData = false;
      return;
    }
    if (line.startsWith(":")) return; // comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.dataLines.push(value);
      this.hasData = true;
    } else if (field === "event") {
      this.eventName = value;
    }
    // id and retry concern reconnecting EventSource clients; a completion is never resumed.
  }
}
