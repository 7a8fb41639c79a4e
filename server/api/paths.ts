// Request paths decoded strictly, for every route at once (proxy.ts calls this before any
// route sees the request): each segment must be percent-encoded UTF-8 with no control
// character. Otherwise Next.js fails decoding a route's parameter with a bare 500, and a NUL
// that did decode would reach PostgreSQL, which refuses it in text.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** What is wrong with `pathname` (as the request sent it, still percent-encoded); null when nothing is. */
export function pathProblem(pathname: string): string | null {
  for (const segment of pathname.split("/")) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return `the path segment "${segment}" is not percent-encoded UTF-8`;
    }
    if (CONTROL.test(decoded)) return `the path segment "${segment}" holds a control character (such as NUL)`;
  }
  return null;
}
