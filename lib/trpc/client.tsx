"use client";
// The browser's tRPC client: queries batched over HTTP, mutations one request each with an
// `Idempotency-Key` per intent (./intent-keys.ts: a double click is carried out once),
// subscriptions over Server-Sent Events (`httpSubscriptionLink`), all at /api/trpc with the
// session cookie.
// A dropped subscription is retried with backoff and resumes after the last event it got
// (tRPC sends it as `lastEventId`); an authorization or not-found error is final.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import {
  createTRPCClient,
  httpBatchLink,
  httpLink,
  httpSubscriptionLink,
  retryLink,
  splitLink,
  type TRPCClientError,
  type TRPCLink,
} from "@trpc/client";
import { observable } from "@trpc/server/observable";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "@/server/api/root";
import { IntentKeys } from "./intent-keys";

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

/** Gives each mutation its intent's key (op.context.idempotencyKey), released when it is answered. */
function intentLink(intents: IntentKeys): TRPCLink<AppRouter> {
  return () =>
    ({ op, next }) =>
      observable((observer) => {
        if (op.type !== "mutation") return next(op).subscribe(observer);
        const intent = intents.take(op.path, op.input);
        const subscription = next({ ...op, context: { ...op.context, idempotencyKey: intent.key } }).subscribe({
          next: (value) => observer.next(value),
          error: (err) => {
            intent.settle();
            observer.error(err);
          },
          complete: () => {
            intent.settle();
            observer.complete();
          },
        });
        return () => {
          intent.settle();
          subscription.unsubscribe();
        };
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
        false: [
          intentLink(new IntentKeys()),
          splitLink({
            condition: (op) => op.type === "mutation",
            true: httpLink({
              url: ENDPOINT,
              headers: ({ op }) => (typeof op.context.idempotencyKey === "string" ? { "Idempotency-Key": op.context.idempotencyKey } : {}),
            }),
            false: httpBatchLink({ url: ENDPOINT }),
          }),
        ],
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
