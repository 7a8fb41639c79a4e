// `/settings`: the first section a member may read (workflows are open to everyone; the
// rest is for operators and admins).
import { redirect } from "next/navigation";
import { hasRole } from "@/lib/roles";
import { signedInPage } from "../_lib/page-context";

export const dynamic = "force-dynamic";

export default async function SettingsIndex() {
  const { user } = await signedInPage("/settings");
  redirect(hasRole(user.role, "operator") ? "/settings/projects" : "/settings/workflows");
}
