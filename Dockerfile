# A3S Code Server image: build with dev dependencies, run with production ones only.
#
#   docker build -t a3s-code-server .
#   docker run -p 8080:8080 -v a3s-data:/data -v "$PWD:/workspace" \
#     -e A3S_WORKSPACE_ROOTS=/workspace -e OPENAI_API_KEY=sk-... \
#     -e A3S_API_TOKENS='[{"token":"<at least 16 chars>","principal":"me","tenantId":"default","scopes":["sessions"]}]' \
#     a3s-code-server
#
# The server binds 0.0.0.0 inside the container. A non-loopback bind refuses to start without API
# tokens (anonymous access is allowed on loopback only), so A3S_API_TOKENS (or api_tokens in a config
# file named by A3S_CONFIG) must be set.

# ---- build stage: compile TypeScript to dist/ ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# ---- runtime stage ----
FROM node:20-bookworm-slim AS runtime
# git and bash back the built-in git and bash tools; ca-certificates lets git and the provider use HTTPS.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Create the mount points owned by `node`, so fresh named volumes are writable by the non-root user.
RUN mkdir -p /data /workspace && chown node:node /data /workspace
USER node
ENV A3S_HOST=0.0.0.0 A3S_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.A3S_PORT || '8080') + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js"]
