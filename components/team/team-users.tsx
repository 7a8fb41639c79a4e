"use client";
// The users page's controls (req X2): every member with their role (changeable), last
// sign-in and status (disable / enable), the invitation form whose link is shown once, and
// the pending invitations (revocable). Each change goes through the server's rules — at least
// one enabled admin remains, nobody disables themselves — whose refusals show here as said.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { EmptyState, Panel } from "@/components/panel";
import { FIELD_CLASS, LABEL_CLASS } from "@/components/form-classes";
import { ROLES, type Role } from "@/lib/roles";
import { trpcFieldErrors, useTRPC } from "@/lib/trpc/client";
import type { RouterOutputs } from "@/lib/client";
import { CopyOnce } from "./copy-once";
import {
  BUTTON_CLASS,
  DANGER_BUTTON_CLASS,
  MUTED_CLASS,
  PRIMARY_BUTTON_CLASS,
  TBODY_CLASS,
  TD_CLASS,
  THEAD_ROW_CLASS,
  TH_CLASS,
} from "./classes";
import { ErrorLine, When } from "./parts";

type UserItem = RouterOutputs["users"]["list"][number];
type InvitationItem = RouterOutputs["invitations"]["list"][number];

export function TeamUsers({ users, invitations, me }: { users: UserItem[]; invitations: InvitationItem[]; me: string }) {
  return (
    <>
      <UsersTable users={users} me={me} />
      <InviteForm />
      <PendingInvitations invitations={invitations} />
    </>
  );
}

function UsersTable({ users, me }: { users: UserItem[]; me: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const onSuccess = () => router.refresh();
  const setRole = useMutation(trpc.users.setRole.mutationOptions({ onSuccess }));
  const disable = useMutation(trpc.users.disable.mutationOptions({ onSuccess }));
  const error = setRole.error ?? disable.error;
  const pending = setRole.isPending || disable.isPending;
  return (
    <Panel title="People" meta={`${users.length} ${users.length === 1 ? "member" : "members"}`}>
      {error ? (
        <div className="border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
          <ErrorLine>{error.message}</ErrorLine>
        </div>
      ) : null}
      <div className="relative overflow-x-auto">
        <table className="w-full min-w-[640px] text-left text-sm" data-testid="users">
          <thead>
            <tr className={THEAD_ROW_CLASS}>
              <th className={TH_CLASS}>Name</th>
              <th className={TH_CLASS}>Role</th>
              <th className={TH_CLASS}>Last sign-in</th>
              <th className={TH_CLASS}>Status</th>
              <th className={TH_CLASS}>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody className={TBODY_CLASS}>
            {users.map((u) => (
              <tr key={u.id} data-email={u.email}>
                <td className={TD_CLASS}>
                  <span className="font-medium">{u.name}</span>
                  {u.id === me ? <span className={`${MUTED_CLASS} ml-1`}>(you)</span> : null}
                  <span className={`${MUTED_CLASS} block break-all`}>{u.email}</span>
                </td>
                <td className={TD_CLASS}>
                  <select
                    aria-label={`Role of ${u.name}`}
                    value={u.role}
                    disabled={pending}
                    onChange={(e) => setRole.mutate({ userId: u.id, role: e.target.value as Role })}
                    className="rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 shadow-sm outline-none focus:border-sky-600 focus:ring-2 focus:ring-sky-600 disabled:opacity-60 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100"
                  >
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                </td>
                <td className={`${TD_CLASS} text-xs`}>
                  <When at={u.lastSignInAt} none="never" />
                </td>
                <td className={TD_CLASS}>
                  {u.disabledAt ? (
                    <span className="rounded-full bg-zinc-500/10 px-2 py-0.5 text-xs font-medium text-zinc-700 ring-1 ring-zinc-500/25 ring-inset dark:text-zinc-300">
                      disabled
                    </span>
                  ) : (
                    <span className="rounded-full bg-emerald-500/10 px-2 py-0.5 text-xs font-medium text-emerald-800 ring-1 ring-emerald-600/25 ring-inset dark:text-emerald-300">
                      active
                    </span>
                  )}
                </td>
                <td className={`${TD_CLASS} text-right`}>
                  {u.disabledAt ? (
                    <button
                      type="button"
                      disabled={pending}
                      className={BUTTON_CLASS}
                      onClick={() => disable.mutate({ userId: u.id, disabled: false })}
                    >
                      Enable<span className="sr-only"> {u.name}</span>
                    </button>
                  ) : (
                    <button
                      type="button"
                      disabled={pending}
                      className={DANGER_BUTTON_CLASS}
                      onClick={() => disable.mutate({ userId: u.id, disabled: true })}
                    >
                      Disable<span className="sr-only"> {u.name}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Panel>
  );
}

function InviteForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const create = useMutation(trpc.invitations.create.mutationOptions({ onSuccess: () => router.refresh() }));
  const [link, setLink] = useState<string | null>(null);
  const errors = trpcFieldErrors(create.error);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "").trim();
    setLink(null);
    create.mutate(
      { role: String(form.get("role")) as Role, expiresInDays: Number(form.get("expiresInDays")), ...(email ? { email } : {}) },
      // The link is built on the host this page was opened at, so it works for whoever the admin sends it to from here.
      { onSuccess: (created) => setLink(`${window.location.origin}${created.path}`) },
    );
  };
  return (
    <Panel title="Invite someone" meta="the link works once">
      <form onSubmit={submit} className="space-y-3 p-4" aria-label="Invite someone">
        <div className="grid grid-cols-1 gap-3 sm:grid-cols-[10rem_minmax(0,1fr)_8rem]">
          <div>
            <label htmlFor="invite-role" className={LABEL_CLASS}>
              Role
            </label>
            <select id="invite-role" name="role" defaultValue="operator" className={FIELD_CLASS}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="invite-email" className={LABEL_CLASS}>
              Email (optional)
            </label>
            <input
              id="invite-email"
              name="email"
              type="email"
              placeholder="anyone with the link"
              aria-describedby="invite-email-hint"
              aria-invalid={errors.email ? true : undefined}
              className={FIELD_CLASS}
            />
            <span id="invite-email-hint" className={`${MUTED_CLASS} mt-1 block`}>
              {errors.email?.join("; ") ?? "When set, the account must use this email."}
            </span>
          </div>
          <div>
            <label htmlFor="invite-days" className={LABEL_CLASS}>
              Expires in days
            </label>
            <input id="invite-days" name="expiresInDays" type="number" min={1} max={30} defaultValue={7} required className={FIELD_CLASS} />
            {errors.expiresInDays ? (
              <span className="mt-1 block text-xs text-rose-700 dark:text-rose-400">{errors.expiresInDays.join("; ")}</span>
            ) : null}
          </div>
        </div>
        {create.error && !Object.keys(errors).length ? <ErrorLine>{create.error.message}</ErrorLine> : null}
        <button type="submit" disabled={create.isPending} className={PRIMARY_BUTTON_CLASS}>
          {create.isPending ? "Creating…" : "Create invitation link"}
        </button>
        {link ? (
          <CopyOnce
            label="Invitation link"
            value={link}
            testId="invitation-link"
            note="Shown only now: send it to the person you invite. It works once, until it expires or you revoke it."
          />
        ) : null}
      </form>
    </Panel>
  );
}

function PendingInvitations({ invitations }: { invitations: InvitationItem[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const revoke = useMutation(trpc.invitations.revoke.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <Panel title="Pending invitations" meta={invitations.length ? String(invitations.length) : undefined}>
      {revoke.error ? (
        <div className="border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
          <ErrorLine>{revoke.error.message}</ErrorLine>
        </div>
      ) : null}
      {invitations.length === 0 ? (
        <EmptyState title="No pending invitations" hint="Invitations that were used, revoked or have expired are not listed." />
      ) : (
        <ul className={TBODY_CLASS} data-testid="invitations">
          {invitations.map((i) => (
            <li key={i.id} className="flex flex-wrap items-center justify-between gap-2 px-4 py-2.5 text-sm">
              <div className="min-w-0">
                <span className="font-medium">{i.role}</span> · <span className="break-all">{i.email ?? "anyone with the link"}</span>
                <span className={`${MUTED_CLASS} block`}>
                  invited by {i.invitedByName} · expires <When at={i.expiresAt} none="never" />
                </span>
              </div>
              <button type="button" disabled={revoke.isPending} className={DANGER_BUTTON_CLASS} onClick={() => revoke.mutate({ id: i.id })}>
                Revoke<span className="sr-only"> the invitation {i.email ? `for ${i.email}` : `as ${i.role}`}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}
