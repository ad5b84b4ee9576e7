# A3S Code Server image: build with dev dependencies, run with production ones only, as the non-root user `node`
# (uid 1000), with bubblewrap for the command sandbox.
#
#   docker build -t a3s-code-server .
#   docker run -p 8080:8080 -v a3s-data:/data -v "$PWD:/workspace" \
#     --security-opt seccomp=deploy/seccomp-bwrap.json --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined \
#     -e A3S_WORKSPACE_ROOTS=/workspace -e OPENAI_API_KEY=sk-... -e A3S_SANDBOX_CGROUPS=optional \
#     -e A3S_API_TOKENS='[{"token":"<at least 16 chars>","principal":"me","tenantId":"default","scopes":["sessions"]}]' \
#     a3s-code-server
#
# The server binds 0.0.0.0 inside the container. A non-loopback bind refuses to start without API
# tokens (anonymous access is allowed on loopback only), so A3S_API_TOKENS (or api_tokens in a config
# file named by A3S_CONFIG) must be set. With tokens, sandbox.mode defaults to "required": the server
# refuses to start unless bwrap creates its namespaces and mounts a fresh /proc, and, unless
# sandbox.cgroups = "optional", unless a writable cgroup bounds each command's processes and memory.
# Docker's defaults stop all three, hence the options above (docs/deployment.md; never --privileged):
# - seccomp=deploy/seccomp-bwrap.json: Docker's default profile plus clone/unshare with namespace flags,
#   mount, umount2, pivot_root and sethostname, which bwrap needs;
# - systempaths=unconfined: Docker masks parts of /proc, and the kernel then refuses bwrap a fresh procfs
#   ("Can't mount proc on /newroot/proc"), and makes /proc/sys read-only, where bwrap writes
#   user/max_user_namespaces; the sandbox never binds the container's /proc instead;
# - apparmor=unconfined: Docker's AppArmor profile denies the mounts bwrap makes;
# - A3S_SANDBOX_CGROUPS=optional: a container's cgroup file system is read-only to uid 1000, so commands
#   get rlimits (CPU time, address space, file size) but no per-command process or memory bound; bound
#   the container itself instead (--pids-limit, --memory). Leave it unset where a cgroup is delegated.

# ---- build stage: compile TypeScript to dist/ ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# ---- runtime stage ----
FROM node:20-bookworm-slim AS runtime
# bubblewrap is the command sandbox (bwrap); git and bash back the built-in git and bash tools (bash is
# already in the base image, named so it stays); ca-certificates lets git and the provider use HTTPS.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap git bash ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Create the mount points owned by `node` (uid 1000, from the base image), so fresh named volumes are
# writable by the non-root user. The server runs as `node`, so sandbox.run_as does not apply (root only):
# contained commands run as uid 1000 outside the sandbox too.
RUN mkdir -p /data /workspace && chown node:node /data /workspace
USER node
ENV A3S_HOST=0.0.0.0 A3S_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.A3S_PORT || '8080') + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js"]
