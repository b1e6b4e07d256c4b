#!/usr/bin/env bash
# The official e-invoice validators (test/einvoice, docs/e-invoices.md) run with Saxon-HE 9.9+.
# Finds its jar ($SAXON_JAR, else Debian's /usr/share/java/Saxon-HE.jar), or installs Debian's
# libsaxonhe-java when running as root with apt-get; else says why not and exits 1 (the tests then
# skip the official validation loudly, or fail under CI). Prints the jar's path on success.
set -euo pipefail
source "$(dirname "$0")/lib/apt-install.sh"
JAR="${SAXON_JAR:-/usr/share/java/Saxon-HE.jar}"
if [ ! -f "$JAR" ]; then
  if [ -n "${SAXON_JAR:-}" ]; then
    echo "ensure-saxon: SAXON_JAR=$SAXON_JAR does not exist" >&2
    exit 1
  fi
  apt_install ensure-saxon Saxon-HE "or put Saxon-HE 9.9+ somewhere and set SAXON_JAR" libsaxonhe-java
  [ -f "$JAR" ] || { echo "ensure-saxon: apt-get finished but $JAR is not there" >&2; exit 1; }
fi
echo "$JAR"
