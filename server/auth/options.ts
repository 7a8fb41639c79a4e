// next-auth 4 configuration: email + password out of the box (argon2id, constant time,
// disabled users refused); GitHub and a generic OIDC provider only when their variables
// are set. JWT sessions signed with NEXTAUTH_SECRET; the token carries only the user id
// (`sub`), and role, name and email are read fresh from the database for every session.
//
// Provider sign-in policy: the person must already be a Cat Cafe user (an admin creates
// them), matched by a *verified* email address. Nobody is created by signing in with a
// provider, so enabling GitHub does not open the team to every GitHub account.
import type { AuthOptions, Profile } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider, { type GithubEmail, type GithubProfile } from "next-auth/providers/github";
import type { OAuthConfig, Provider } from "next-auth/providers/index";
import type { Role } from "../../lib/roles";
import type { PrismaClient } from "../db/generated/client";
import { logger } from "../log";
import type { AuthEnv } from "./env";
import { authorizeWithBackoff, requestAddress } from "./sign-in-limit";
import { currentSessionVersion, endBrowserSessions, findActiveUserByEmail, recordSignIn, resolveSessionUser } from "./users";

declare module "next-auth" {
  interface Session {
    user?: { id: string; email: string; name: string; role: Role };
  }
  /** Both providers say whether the email is verified: OIDC's own claim, GitHub's from its emails API (below). */
  interface Profile {
    email_verified?: boolean;
  }
}

export const SIGN_IN_PATH = "/signin";

interface OidcProfile extends Record<string, unknown> {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
}

function githubProvider(clientId: string, clientSecret: string): Provider {
  return GitHubProvider({
    clientId,
    clientSecret,
    // GitHub's profile email may be unverified: ask for the primary email and whether it is verified.
    userinfo: {
      url: "https://api.github.com/user",
      async request({ client, tokens }) {
        const profile = await client.userinfo<GithubProfile>(tokens.access_token ?? "");
        const res = await fetch("https://api.github.com/user/emails", {
          headers: { Authorization: `Bearer ${tokens.access_token}`, Accept: "application/vnd.github+json" },
        });
        const emails = res.ok ? ((await res.json()) as GithubEmail[]) : [];
        const primary = emails.find((e) => e.primary && e.verified);
        // GitHubProvider's profile() maps this to the user; signIn below checks email_verified.
        // A missing name or email is undefined rather than null (next-auth's Profile has no
        // null): profile() falls back to the login for the name either way, and next-auth
        // reads the user's email as `email?.toLowerCase()`, so both mean none.
        const verified: Profile = {
          ...profile,
          name: profile.name ?? undefined,
          email: primary?.email,
          email_verified: Boolean(primary),
        };
        return verified;
      },
    },
  });
}

function oidcProvider(issuer: string, clientId: string, clientSecret: string, name: string): OAuthConfig<OidcProfile> {
  return {
    id: "oidc",
    name,
    type: "oauth",
    wellKnown: `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`,
    authorization: { params: { scope: "openid email profile" } },
    idToken: true,
    checks: ["pkce", "state"],
    clientId,
    clientSecret,
    profile(profile) {
      return {
        id: profile.sub,
        email: profile.email ?? null,
        name: profile.name ?? profile.preferred_username ?? profile.email ?? profile.sub,
      };
    },
  };
}

export function createAuthOptions(deps: { prisma: () => PrismaClient; env: AuthEnv }): AuthOptions {
  const { env } = deps;
  const providers: Provider[] = [
    CredentialsProvider({
      id: "credentials",
      name: "Email and password",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials, req) {
        const { user } = await authorizeWithBackoff(deps.prisma(), credentials, requestAddress(req?.headers));
        return user ? { id: user.id, email: user.email, name: user.name } : null;
      },
    }),
  ];
  if (env.GITHUB_ID && env.GITHUB_SECRET) providers.push(githubProvider(env.GITHUB_ID, env.GITHUB_SECRET));
  if (env.OIDC_ISSUER && env.OIDC_CLIENT_ID && env.OIDC_CLIENT_SECRET)
    providers.push(oidcProvider(env.OIDC_ISSUER, env.OIDC_CLIENT_ID, env.OIDC_CLIENT_SECRET, env.OIDC_NAME));

  return {
    providers,
    secret: env.NEXTAUTH_SECRET,
    session: { strategy: "jwt" },
    pages: { signIn: SIGN_IN_PATH, error: SIGN_IN_PATH },
    callbacks: {
      async signIn({ user, account, profile }) {
        if (!account || account.type === "credentials") return true;
        const verified = profile?.email_verified === true;
        const existing = verified && user.email ? await findActiveUserByEmail(deps.prisma(), user.email) : null;
        if (!existing)
          logger.warn(
            { provider: account.provider, verified },
            "auth: provider sign-in refused (no enabled user with that verified email)",
          );
        return existing !== null;
      },
      async jwt({ token, user, account }) {
        // On sign-in, `sub` becomes our user id (a provider's `user.id` is its own id).
        if (user && account && account.type !== "credentials") {
          token.sub = (await findActiveUserByEmail(deps.prisma(), user.email ?? ""))?.id ?? "";
        }
        // A new session carries the user's current session version (raised at sign-out), and
        // the sign-in is noted for the users page, whichever provider it came through.
        if (user) await recordSignIn(deps.prisma(), token.sub);
        const sv = user ? await currentSessionVersion(deps.prisma(), token.sub) : token.sv;
        return { sub: token.sub, sv, iat: token.iat, exp: token.exp, jti: token.jti };
      },
      async session({ session, token }) {
        const user = await resolveSessionUser(deps.prisma(), token.sub, token.sv);
        return {
          expires: session.expires,
          ...(user ? { user: { id: user.id, email: user.email, name: user.name, role: user.role } } : {}),
        };
      },
    },
    events: {
      signIn({ user, account }) {
        logger.info({ userId: user.id, provider: account?.provider }, "auth: signed in");
      },
      async signOut({ token }) {
        // The cookie is cleared in this browser; raising the version ends copies of it too.
        await endBrowserSessions(deps.prisma(), token?.sub);
        logger.info({ userId: token?.sub }, "auth: signed out");
      },
    },
    logger: {
      error: (code, metadata) => logger.error({ code, metadata }, "next-auth error"),
      warn: (code) => logger.warn({ code }, "next-auth warning"),
      debug: () => {},
    },
  };
}
