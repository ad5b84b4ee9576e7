#!/usr/bin/env sh
# Installs what the test suite needs besides npm packages: redis-server and redis-cli (a throwaway server and a
# local Redis Cluster per test run),
# bubblewrap (the command sandbox), git (the git tool tests), nginx (the round-robin balancer of the cluster tests), chromium-headless-shell (the console's browser tests),
# strace (test/deploy/seccomp-profile.test.ts counts the syscalls of a sandboxed command), the system user a3s-sandbox
# (a server running as root runs contained commands as it: config sandbox.run_as), and Docker's default seccomp profile
# as Debian ships it (extracted from its package, not installed: the seccomp test compares deploy/seccomp-bwrap.json with it).
# Works on a fresh Debian/Ubuntu machine as root without sudo and before any `apt-get update`; as another user it
# uses sudo when present. Does nothing for what is already installed.
set -eu

as_root=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then as_root="sudo"; fi

# The unprivileged user sandboxed commands run as when the server runs as root (no home, no login shell).
if ! getent passwd a3s-sandbox >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] || [ -n "$as_root" ]; then
    echo "install-test-deps: creating the system user a3s-sandbox" >&2
    $as_root useradd --system --no-create-home --shell /usr/sbin/nologin a3s-sandbox
  else
    echo "install-test-deps: not root and no sudo; a server run as root needs the user: useradd --system --no-create-home --shell /usr/sbin/nologin a3s-sandbox" >&2
  fi
fi

missing=""
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
# redis-cli joins the test run's local Redis Cluster (Debian's redis-server depends on redis-tools, which has it).
command -v redis-server >/dev/null 2>&1 && ! command -v redis-cli >/dev/null 2>&1 && missing="$missing redis-tools"
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v git >/dev/null 2>&1 || missing="$missing git"
command -v strace >/dev/null 2>&1 || missing="$missing strace"
# Debian's nginx: the cluster tests put it, with deploy/nginx.conf, in front of two nodes as plain round-robin.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
# Headless Chromium for the console's browser tests (puppeteer-core drives the Debian binary; nothing is
# downloaded), with one font family so pages and the README screenshot render text.
[ -n "${CHROMIUM_PATH:-}" ] || command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || missing="$missing chromium-headless-shell fonts-liberation"
install_missing() {
  [ -z "$missing" ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: apt-get is not available; install these yourself:$missing" >&2
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ] && [ -z "$as_root" ]; then
    echo "install-test-deps: not root and no sudo; install these yourself:$missing" >&2
    exit 1
  fi
  echo "install-test-deps: installing$missing" >&2
  $as_root apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
  updated=1
}
updated=0
install_missing

# Docker's default seccomp profile from Debian's golang-github-docker-docker-dev (one file of it; the package is not
# installed). Not fatal: without it the seccomp test still checks the profile against the file's pinned SHA-256.
docker_seccomp=/usr/local/share/a3s-test/docker-default-seccomp.json
if [ ! -f "$docker_seccomp" ] && command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$as_root" ]; }; then
  work=$(mktemp -d)
  chmod 755 "$work"
  if { [ "$updated" -eq 1 ] || $as_root apt-get update -qq; } \
    && (cd "$work" && $as_root apt-get download -qq golang-github-docker-docker-dev >/dev/null 2>&1) \
    && dpkg-deb --fsys-tarfile "$work"/golang-github-docker-docker-dev_*.deb | tar -x -C "$work" ./usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json; then
    $as_root mkdir -p "$(dirname "$docker_seccomp")"
    $as_root cp "$work/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json" "$docker_seccomp"
    echo "install-test-deps: Docker's default seccomp profile in $docker_seccomp" >&2
  else
    echo "install-test-deps: could not extract Docker's default seccomp profile (the seccomp test uses its pinned hash)" >&2
  fi
  $as_root rm -rf "$work"
fi
