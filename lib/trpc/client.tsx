"use client";
// The browser's tRPC client: queries and mutations batched over HTTP, subscriptions over
// Server-Sent Events (`httpSubscriptionLink`), both at /api/trpc with the session cookie.
// A dropped subscription is retried with backoff and resumes after the last event it got
// (tRPC sends it as `lastEventId`); an authorization or not-found error is final.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, retryLink, splitLink, type TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "@/server/api/root";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

const ENDPOINT = "/api/trpc";
const FINAL_CODES = new Set(["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST"]);

/** The tRPC error code of a failed call ("CONFLICT", "FORBIDDEN", ...), if it has one. */
export function trpcErrorCode(error: unknown): string | null {
  const data = (error as TRPCClientError<AppRouter> | null)?.data as { code?: unknown } | null | undefined;
  return typeof data?.code === "string" ? data.code : null;
}

/** A refused call's messages by input field (zod's, or a domain check's), for a form to show beside each field. */
export function trpcFieldErrors(error: unknown): Record<string, string[]> {
  const data = (error as TRPCClientError<AppRouter> | null)?.data as
    { zodError?: { fieldErrors?: Record<string, string[]> } | null } | null | undefined;
  return data?.zodError?.fieldErrors ?? {};
}

function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      // Pages are server-rendered with fresh data; the client refetches only what it opens.
      queries: { staleTime: 30_000, retry: (failures, error) => failures < 2 && !FINAL_CODES.has(trpcErrorCode(error) ?? "") },
    },
  });
}

function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: [
          retryLink({
            retry: ({ error }) => !FINAL_CODES.has(trpcErrorCode(error) ?? ""),
            retryDelayMs: (attempt) => Math.min(500 * 2 ** attempt, 15_000),
          }),
          httpSubscriptionLink({ url: ENDPOINT }),
        ],
        false: httpBatchLink({ url: ENDPOINT }),
      }),
    ],
  });
}

export function TRPCReactProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(makeTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
