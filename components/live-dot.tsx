// A live mark: a solid dot and, while `ping`, a ring that spreads from it a few times and then
// rests (the brief animation of app/globals.css; none with reduced motion). The header's
// database and runner marks, the session's live connection and the running step use it
// (docs/session-view.md, live marks).

export function LiveDot({ color, ping, size = "size-2" }: { color: string; ping: boolean; size?: "size-2" | "size-1.5" }) {
  return (
    <span className={`relative flex ${size}`}>
      {ping ? <span className={`absolute inline-flex size-full rounded-full opacity-60 ${color} motion-safe:animate-ping-brief`} /> : null}
      <span className={`relative inline-flex ${size} rounded-full ${color}`} />
    </span>
  );
}
