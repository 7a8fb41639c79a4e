// Structured logs (pino, JSON lines on stdout). Child loggers carry runner/step/session ids.
import pino from "pino";
import { redactKnownSecrets } from "./redact";

export const logger = pino({
  level: process.env.CATCAFE_LOG_LEVEL ?? "info",
  base: { service: process.env.CATCAFE_SERVICE ?? "catcafe" },
  // Secrets never reach logs, even if a caller passes a whole config object by mistake.
  redact: { paths: ["*.DATABASE_URL", "*.NEXTAUTH_SECRET", "*.apiKey", "*.password", "*.token"], censor: "[redacted]" },
  // Nor any value handed to an agent, whatever field or message it comes back in (process/env.ts).
  hooks: { streamWrite: (line) => redactKnownSecrets(line).text },
});
