#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed for the browser test (test/browser): Debian's
# `chromium` package, driven by playwright-core (which downloads no browser of its own here).
# Prints the browser's path on success. Installs it with apt-get when missing and running as root;
# otherwise says why it cannot, and exits 1 so the caller can decide (the test skips loudly, or
# fails under CI).
set -euo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

find_chromium() {
  for candidate in "${CHROMIUM_PATH:-}" "$(command -v chromium 2>/dev/null || true)" /usr/bin/chromium \
    "$(command -v chromium-browser 2>/dev/null || true)" "$(command -v google-chrome 2>/dev/null || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! find_chromium; then
  apt_install ensure-chromium Chromium "or set CHROMIUM_PATH to a Chromium or Chrome binary" chromium
  find_chromium || { echo "ensure-chromium: apt-get finished but no chromium binary was found" >&2; exit 1; }
fi
