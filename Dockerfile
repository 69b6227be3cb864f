# syntax=docker/dockerfile:1
# Payment Intent service. Build: docker build -t payment-intents .
# Run:   docker run -p 8080:8080 -e DATABASE_URL=postgres://… -e PAGE_TOKEN_SECRET=… payment-intents

# Stage 1: type-check the sources with the full toolchain (devDependencies).
# Nothing from this stage ships except the proof that it passed.
FROM node:24-slim AS verify
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY gen ./gen
COPY src ./src
RUN npx tsc --noEmit && touch /app/.verified

# Stage 2: the runtime image: production dependencies only (tsx runs the
# TypeScript sources; Node.js 24 comes from the base image), as a non-root user.
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# Builds only when the type-check passed.
COPY --from=verify /app/.verified /tmp/.verified
COPY tsconfig.json ./
COPY gen ./gen
COPY src ./src
# The image's "node" user (uid 1000): the service needs to write nothing in /app.
USER node
EXPOSE 8080
# /healthz answers 200 while the process serves (no key, outside BASE_PATH).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node runs as PID 1 and handles SIGTERM itself (graceful shutdown); no npm in between to swallow it.
CMD ["node", "--import", "tsx", "src/main.ts"]
