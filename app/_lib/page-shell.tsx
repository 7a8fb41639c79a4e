// The frame every signed-in page shares: the header (navigation, health, the visitor) and
// the main column. Health is read here, so each page shows whether the database and the
// runners are up without asking for it.
import type { ReactNode } from "react";
import { AppHeader, type AppSection } from "@/components/app-header";
import type { CurrentUser } from "@/server/auth/request";
import { getWebPool } from "@/server/db/web-pool";
import { countLiveRunners } from "@/server/health";
import { logger } from "@/server/log";
import { APP_VERSION } from "@/server/version";

export async function PageShell({
  user,
  active,
  wide = false,
  children,
}: {
  user: CurrentUser | null;
  active: AppSection;
  wide?: boolean;
  children: ReactNode;
}) {
  let liveRunners: number | null = null;
  let dbOk = true;
  try {
    liveRunners = await countLiveRunners(getWebPool());
  } catch (err) {
    dbOk = false;
    logger.warn({ err }, "page header: could not count live runners");
  }
  return (
    <>
      <AppHeader
        version={APP_VERSION}
        dbOk={dbOk}
        liveRunners={liveRunners}
        user={user ? { name: user.name, email: user.email, role: user.role } : null}
        active={active}
      />
      <main className={`mx-auto space-y-4 px-5 py-5 ${wide ? "max-w-[1600px]" : "max-w-[1400px]"}`}>{children}</main>
    </>
  );
}
