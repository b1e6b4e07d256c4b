#!/usr/bin/env bash
# The official e-invoice validators (test/einvoice, docs/e-invoices.md) run with Saxon-HE 9.9+.
# Finds its jar ($SAXON_JAR, else Debian's /usr/share/java/Saxon-HE.jar), or installs Debian's
# libsaxonhe-java when running as root with apt-get; else says why not and exits 1 (the tests then
# skip the official validation loudly, or fail under CI). Prints the jar's path on success.
set -euo pipefail
JAR="${SAXON_JAR:-/usr/share/java/Saxon-HE.jar}"
if [ -f "$JAR" ]; then
  echo "$JAR"
  exit 0
fi
if [ -n "${SAXON_JAR:-}" ]; then
  echo "ensure-saxon: SAXON_JAR=$SAXON_JAR does not exist" >&2
  exit 1
fi
if [ "$(id -u)" != "0" ]; then
  echo "ensure-saxon: Saxon-HE is not installed and this is not root; install it with: sudo apt-get install -y libsaxonhe-java" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-saxon: Saxon-HE is not installed and apt-get is not available here; put Saxon-HE 9.9+ somewhere and set SAXON_JAR" >&2
  exit 1
fi
echo "ensure-saxon: installing Debian's libsaxonhe-java (apt-get)…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq libsaxonhe-java >&2
if [ -f "$JAR" ]; then
  echo "$JAR"
  exit 0
fi
echo "ensure-saxon: apt-get finished but $JAR is not there" >&2
exit 1
