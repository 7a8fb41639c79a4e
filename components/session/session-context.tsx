"use client";
// What every part of one session's view needs without threading it through each prop:
// the session id (outputs are fetched per session) and the names of the people who acted.
import { createContext, useContext, type ReactNode } from "react";

interface SessionContextValue {
  sessionId: string;
  names: Record<string, string>;
}

const SessionContext = createContext<SessionContextValue | null>(null);

export function SessionContextProvider({ value, children }: { value: SessionContextValue; children: ReactNode }) {
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSessionContext(): SessionContextValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSessionContext outside a session view");
  return value;
}
