// `/settings`: the first section a member may read (workflows are open to everyone; the
// rest is for operators and admins).
import { redirect } from "next/navigation";
import { hasRole } from "@/lib/roles";
import { readPage } from "../_lib/page-context";
import { PageShell, ReadFailure } from "../_lib/page-shell";

export const dynamic = "force-dynamic";

export default async function SettingsIndex() {
  const read = await readPage("/settings", "/settings", async ({ user }) => user.role);
  if (!read.ok)
    return (
      <PageShell user={read.user} path="/settings">
        <ReadFailure failure={read} />
      </PageShell>
    );
  redirect(hasRole(read.data, "operator") ? "/settings/projects" : "/settings/workflows");
}
