// A bounded rolling tail of a byte stream: keeps the last `capBytes` bytes and counts the
// rest, so a command printing gigabytes costs at most the cap (plus one chunk) in memory.

export class OutputTail {
  private chunks: Buffer[] = [];
  private keptBytes = 0;
  /** Every byte seen, kept or not. */
  totalBytes = 0;

  constructor(private readonly capBytes: number) {}

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (this.capBytes === 0) return;
    if (chunk.length >= this.capBytes) {
      // Copied so the tail does not pin a large chunk's whole backing buffer.
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.capBytes))];
      this.keptBytes = this.capBytes;
      return;
    }
    this.chunks.push(chunk);
    this.keptBytes += chunk.length;
    while (this.keptBytes > this.capBytes) {
      const first = this.chunks[0] as Buffer;
      const excess = this.keptBytes - this.capBytes;
      if (first.length <= excess) {
        this.chunks.shift();
        this.keptBytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.keptBytes -= excess;
      }
    }
  }

  get truncated(): boolean {
    return this.totalBytes > this.keptBytes;
  }

  /** The kept bytes as UTF-8; a character cut in half at the start is dropped. */
  text(): string {
    let bytes = Buffer.concat(this.chunks);
    if (this.truncated) {
      let start = 0;
      // UTF-8 continuation bytes are 10xxxxxx; at most 3 follow a lead byte.
      while (start < bytes.length && start < 3 && ((bytes[start] as number) & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    return bytes.toString("utf8");
  }
}
