"use client";
// The tokens page's controls (req U3): create a token (name, expiry) whose value is shown
// once with a copy button; one's own tokens, each revocable; for an admin, everyone's.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { EmptyState, Panel } from "@/components/panel";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import type { RouterOutputs } from "@/lib/client";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import { CopyOnce } from "./copy-once";
import { DANGER_BUTTON_CLASS, MUTED_CLASS, PRIMARY_BUTTON_CLASS, TBODY_CLASS, TD_CLASS, THEAD_ROW_CLASS, TH_CLASS } from "./classes";
import { ErrorLine, When } from "./parts";

type TokenItem = RouterOutputs["tokens"]["list"][number];
type OwnedTokenItem = RouterOutputs["tokens"]["listAll"][number];

/** Expiry choices, in days ("" = never). */
const EXPIRIES = [
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "365", label: "1 year" },
  { value: "", label: "never" },
];

export function ApiTokens({ mine, everyone, now }: { mine: TokenItem[]; everyone: OwnedTokenItem[] | null; now: string }) {
  return (
    <>
      <CreateToken />
      <TokenTable title="Your tokens" tokens={mine} now={now} testId="my-tokens" />
      {everyone ? <TokenTable title="Everyone's tokens" tokens={everyone} now={now} testId="all-tokens" withOwner /> : null}
    </>
  );
}

function CreateToken() {
  const trpc = useTRPC();
  const router = useRouter();
  const create = useMutation(trpc.tokens.create.mutationOptions({ onSuccess: () => router.refresh() }));
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const errors = trpcFieldErrors(create.error);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const days = String(form.get("expiresInDays") ?? "");
    setCreated(null);
    create.mutate(
      { name: String(form.get("name") ?? ""), expiresInDays: days ? Number(days) : null },
      { onSuccess: (t) => setCreated({ name: t.name, token: t.token }) },
    );
  };
  return (
    <Panel title="Create a token" meta="Authorization: Bearer cc_…">
      <form onSubmit={submit} className="space-y-3 p-4" aria-label="Create a token">
        <div className="grid grid-cols-1 gap-3 sm:grid-cols-[minmax(0,1fr)_10rem]">
          <div>
            <label htmlFor="token-name" className={LABEL_CLASS}>
              Name
            </label>
            <input
              id="token-name"
              name="name"
              required
              maxLength={100}
              placeholder="what uses it (nightly CI)"
              aria-invalid={errors.name ? true : undefined}
              className={FIELD_CLASS}
            />
            {errors.name ? <span className="mt-1 block text-xs text-rose-700 dark:text-rose-400">{errors.name.join("; ")}</span> : null}
          </div>
          <div>
            <label htmlFor="token-expiry" className={LABEL_CLASS}>
              Expires after
            </label>
            <select id="token-expiry" name="expiresInDays" defaultValue="90" className={FIELD_CLASS}>
              {EXPIRIES.map((e) => (
                <option key={e.label} value={e.value}>
                  {e.label}
                </option>
              ))}
            </select>
          </div>
        </div>
        {create.error && !Object.keys(errors).length ? <ErrorLine>{create.error.message}</ErrorLine> : null}
        <button type="submit" disabled={create.isPending} className={PRIMARY_BUTTON_CLASS}>
          {create.isPending ? "Creating…" : "Create token"}
        </button>
        {created ? (
          <CopyOnce
            label={`Token "${created.name}"`}
            value={created.token}
            testId="new-token"
            note="Shown only now: store it somewhere safe (a secret store, your CLI config). Only its first characters are kept."
          />
        ) : null}
      </form>
    </Panel>
  );
}

function status(t: TokenItem, now: string): { label: string; tone: string } {
  if (t.revokedAt) return { label: "revoked", tone: "bg-zinc-500/10 text-zinc-700 ring-zinc-500/25 dark:text-zinc-300" };
  if (t.expiresAt && t.expiresAt <= now)
    return { label: "expired", tone: "bg-amber-500/10 text-amber-800 ring-amber-600/25 dark:text-amber-300" };
  return { label: "active", tone: "bg-emerald-500/10 text-emerald-800 ring-emerald-600/25 dark:text-emerald-300" };
}

function TokenTable({
  title,
  tokens,
  now,
  testId,
  withOwner = false,
}: {
  title: string;
  tokens: Array<TokenItem & { ownerName?: string }>;
  now: string;
  testId: string;
  withOwner?: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const revoke = useMutation(trpc.tokens.revoke.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <Panel title={title} meta={tokens.length ? String(tokens.length) : undefined}>
      {revoke.error ? (
        <div className="border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
          <ErrorLine>{revoke.error.message}</ErrorLine>
        </div>
      ) : null}
      {tokens.length === 0 ? (
        <EmptyState title="No tokens" hint="Create one above, or with catcafe login from a terminal." />
      ) : (
        <div className="relative overflow-x-auto">
          <table className="w-full min-w-[640px] text-left text-sm" data-testid={testId}>
            <thead>
              <tr className={THEAD_ROW_CLASS}>
                {withOwner ? <th className={TH_CLASS}>Owner</th> : null}
                <th className={TH_CLASS}>Name</th>
                <th className={TH_CLASS}>Created</th>
                <th className={TH_CLASS}>Last used</th>
                <th className={TH_CLASS}>Expires</th>
                <th className={TH_CLASS}>Status</th>
                <th className={TH_CLASS}>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody className={TBODY_CLASS}>
              {tokens.map((t) => {
                const s = status(t, now);
                return (
                  <tr key={t.id} data-token={t.name}>
                    {withOwner ? <td className={TD_CLASS}>{t.ownerName}</td> : null}
                    <td className={TD_CLASS}>
                      <span className="font-medium break-all">{t.name}</span>
                      <span className={`${MUTED_CLASS} block font-mono`}>{t.prefix}…</span>
                    </td>
                    <td className={`${TD_CLASS} text-xs`}>
                      <When at={t.createdAt} none="—" />
                    </td>
                    <td className={`${TD_CLASS} text-xs`}>
                      <When at={t.lastUsedAt} none="never" />
                    </td>
                    <td className={`${TD_CLASS} text-xs`}>
                      <When at={t.expiresAt} none="never" />
                    </td>
                    <td className={TD_CLASS}>
                      <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${s.tone}`}>{s.label}</span>
                    </td>
                    <td className={`${TD_CLASS} text-right`}>
                      {t.revokedAt ? null : (
                        <button
                          type="button"
                          disabled={revoke.isPending}
                          className={DANGER_BUTTON_CLASS}
                          onClick={() => revoke.mutate({ id: t.id })}
                        >
                          Revoke<span className="sr-only"> {t.name}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Panel>
  );
}
