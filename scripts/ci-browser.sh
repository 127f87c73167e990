#!/usr/bin/env bash
# CI: make sure headless Chromium is available for test/browser/*.test.ts (playwright-core drives
# Debian's /usr/bin/chromium; `npx playwright install` is never used). Installs Debian's `chromium`
# package when it is missing (about 70 s on a fresh Debian 12 machine: 115 packages, ~113 MB), then
# proves the binary starts headless. Idempotent: does nothing but the check when Chromium is present.
set -euo pipefail

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ ! -x "$CHROMIUM" ]; then
  echo "chromium missing ($CHROMIUM): installing Debian's chromium"
  started=$(date +%s)
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  echo "chromium installed in $(($(date +%s) - started)) s"
fi

"$CHROMIUM" --version 2>/dev/null

# Prove it runs headless on this machine (no sandbox: CI containers run as root).
timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$(mktemp -d)" --dump-dom about:blank >/dev/null 2>&1 \
  || { echo "chromium at $CHROMIUM does not start headless" >&2; exit 1; }
echo "chromium starts headless"
