// /api/auth/*: next-auth (sign-in, sign-out, session, provider callbacks).
import NextAuth from "next-auth";
import { authOptions } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const handler = NextAuth(authOptions);

export { handler as GET, handler as POST };
