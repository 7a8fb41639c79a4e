// Runs before every route (Next.js's proxy, formerly middleware): a path that does not decode
// strictly (server/api/paths.ts) is a 400 here, in the API's error shape under /api.
import { NextResponse, type NextRequest } from "next/server";
import { pathProblem } from "./server/api/paths";

export function proxy(request: NextRequest): NextResponse {
  const { pathname } = new URL(request.url);
  const problem = pathProblem(pathname);
  if (problem === null) return NextResponse.next();
  const headers = { "Cache-Control": "no-store" };
  if (!pathname.startsWith("/api/")) return new NextResponse(`Bad request: ${problem}\n`, { status: 400, headers });
  return NextResponse.json({ error: { code: "INVALID_INPUT", message: problem } }, { status: 400, headers });
}

export const config = { matcher: ["/((?!_next/static|_next/image).*)"] };
