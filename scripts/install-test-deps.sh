#!/usr/bin/env sh
# Installs what the test suite needs besides npm packages: redis-server and redis-cli (a throwaway server and a
# local Redis Cluster per test run),
# bubblewrap (the command sandbox), git (the git tool tests), nginx (the round-robin balancer of the cluster tests), chromium-headless-shell (the console's browser tests),
# and the system user a3s-sandbox (a server running as root runs contained commands as it: config sandbox.run_as).
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
# Debian's nginx: the cluster tests put it, with deploy/nginx.conf, in front of two nodes as plain round-robin.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
# Headless Chromium for the console's browser tests (puppeteer-core drives the Debian binary; nothing is
# downloaded), with one font family so pages and the README screenshot render text.
[ -n "${CHROMIUM_PATH:-}" ] || command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || missing="$missing chromium-headless-shell fonts-liberation"
[ -z "$missing" ] && exit 0

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
