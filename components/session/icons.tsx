// Small stroke icons (16px grid) for the session view's links, drawn inline so they never
// depend on a font having the glyph.
const BASE = "size-3.5 shrink-0 fill-none stroke-current stroke-[1.6] [stroke-linecap:round] [stroke-linejoin:round]";

export function ReplayIcon() {
  return (
    <svg viewBox="0 0 16 16" className={BASE} aria-hidden>
      <path d="M2.5 8a5.5 5.5 0 1 0 1.6-3.9" />
      <path d="M2.5 2.5v2.6h2.6" />
      <path d="M7 5.8v4.4L10.3 8Z" className="fill-current" />
    </svg>
  );
}

export function ForkIcon() {
  return (
    <svg viewBox="0 0 16 16" className={BASE} aria-hidden>
      <circle cx="4.5" cy="3.5" r="1.5" />
      <circle cx="11.5" cy="3.5" r="1.5" />
      <circle cx="8" cy="12.5" r="1.5" />
      <path d="M4.5 5v1.5A1.5 1.5 0 0 0 6 8h4a1.5 1.5 0 0 0 1.5-1.5V5M8 8v3" />
    </svg>
  );
}

export function DownloadIcon() {
  return (
    <svg viewBox="0 0 16 16" className={BASE} aria-hidden>
      <path d="M8 2.5v7.5M4.8 7 8 10.2 11.2 7M3 13h10" />
    </svg>
  );
}
