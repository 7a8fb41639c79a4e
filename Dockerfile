# One image for the whole app: the default command serves the web app (it applies the
# migrations first); docker-compose.yml runs the runner from the same image.
FROM node:20-bookworm-slim

# git: runners work in git checkouts. ca-certificates: agents call their providers over TLS.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

ENV NEXT_TELEMETRY_DISABLED=1 \
    CHECKPOINT_DISABLE=1
WORKDIR /app
RUN chown node:node /app
USER node

# Dependencies first, so a code change does not reinstall them. `npm install` (not `npm ci`,
# see docs: the lockfile may lack other platforms' optional packages); its `postinstall`
# generates the Prisma client, which needs the schema, the Prisma config and the script.
COPY --chown=node:node package.json package-lock.json prisma.config.ts ./
COPY --chown=node:node prisma ./prisma
COPY --chown=node:node scripts/generate-prisma.ts ./scripts/generate-prisma.ts
RUN npm install --no-audit --no-fund

COPY --chown=node:node . .
RUN npm run build

ENV NODE_ENV=production \
    PORT=3000
EXPOSE 3000
# The web process: migrations (safe to run concurrently: they take an advisory lock), then
# the Next.js server as the main process, so it receives SIGTERM from `docker stop`.
CMD ["sh", "-c", "node --import tsx scripts/migrate.ts && exec node_modules/.bin/next start -p \"$PORT\" -H 0.0.0.0"]
