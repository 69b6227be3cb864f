# syntax=docker/dockerfile:1
# Payment Intent service. Build: docker build -t payment-intents .
# Run:   docker run -p 8080:8080 -e DATABASE_URL=postgres://… -e PAGE_TOKEN_SECRET=… payment-intents

# Stage 1: type-check the sources with the full toolchain (devDependencies)
# and build them to JavaScript (npm run build: dist/). Only dist/ ships.
# Install scripts are skipped: the base image brings Node.js 24, and nothing
# here needs buf's or esbuild's binaries (prepare would build before the
# sources are copied, so it runs below).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY gen ./gen
COPY src ./src
RUN npx tsc --noEmit && npm run build

# Stage 2: the runtime image: production dependencies only and the built
# JavaScript, no TypeScript tooling, as a non-root user.
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: prepare (the build) needs devDependencies, and no
# production dependency needs one (swagger-ui-dist's @scarf/scarf telemetry is denied anyway).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The image's "node" user (uid 1000): the service needs to write nothing in /app.
USER node
EXPOSE 8080
# /healthz answers 200 while the process serves (no key, outside BASE_PATH).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The package's command, as `npx payment-intents serve` runs it from an install.
# Node runs as PID 1 and handles SIGTERM itself (graceful shutdown); no npm in between to swallow it.
CMD ["node", "dist/src/cli/payment-intents.js", "serve"]
