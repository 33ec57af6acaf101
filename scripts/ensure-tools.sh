#!/usr/bin/env bash
# Makes sure the command-line tools the test suite calls are installed: `promtool` (Debian package
# `prometheus`), which checks the /metrics exposition, and Chromium (Debian package `chromium`),
# the browser the CORS test drives with playwright-core. Installs from Debian's packages when absent.
# Only the tool is wanted: the package's Prometheus server must not start, so the install runs
# under a policy-rc.d that forbids starting services (Docker images ship one; it is added for the
# install only when the machine has none). Without systemd the unit would not start anyway.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
POLICY=/usr/sbin/policy-rc.d

install_without_starting() {
  local added=0
  if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod 755 "$POLICY"
    added=1
  fi
  echo "installing $* from Debian packages" >&2
  local status=0
  {
    $SUDO apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" \
        >/dev/null
  } || status=$?
  if [ "$added" = 1 ]; then $SUDO rm -f "$POLICY"; fi
  return "$status"
}

if ! command -v promtool >/dev/null 2>&1; then
  install_without_starting prometheus
fi
command -v promtool >/dev/null 2>&1 || { echo "promtool is not installed" >&2; exit 1; }
echo "promtool: $(promtool --version 2>&1 | head -n 1)" >&2

if [ ! -x /usr/bin/chromium ]; then
  install_without_starting chromium
fi
[ -x /usr/bin/chromium ] || { echo "Chromium is not installed at /usr/bin/chromium" >&2; exit 1; }
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null | head -n 1)" >&2
