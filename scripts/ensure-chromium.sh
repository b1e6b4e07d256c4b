#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed for the browser test (test/browser): Debian's
# `chromium` package, driven by playwright-core (which downloads no browser of its own here).
# Prints the browser's path on success. Installs it with apt-get when missing and running as root;
# otherwise says why it cannot, and exits 1 so the caller can decide (the test skips loudly, or
# fails under CI).
set -euo pipefail

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

if path="$(find_chromium)"; then
  echo "$path"
  exit 0
fi

if [ "$(id -u)" != "0" ]; then
  echo "ensure-chromium: Chromium is not installed and this is not root; install it with: sudo apt-get install -y chromium" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: Chromium is not installed and apt-get is not available here" >&2
  exit 1
fi

echo "ensure-chromium: installing Debian's chromium (apt-get)…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq chromium >&2

if path="$(find_chromium)"; then
  echo "$path"
  exit 0
fi
echo "ensure-chromium: apt-get finished but no chromium binary was found" >&2
exit 1
