// Any /api path no route serves: a JSON 404 in the API's error shape, never an HTML page.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function notFound(req: Request): Response {
  const { pathname } = new URL(req.url);
  return Response.json(
    { error: { code: "NOT_FOUND", message: `no API route ${req.method} ${pathname} (see docs/api.md)` } },
    { status: 404, headers: { "Cache-Control": "no-store" } },
  );
}

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
