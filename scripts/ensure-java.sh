#!/usr/bin/env bash
# DynamoDB Local (tests and `npm start`) needs a Java runtime, 17 or later.
# Finds it, or installs Debian's openjdk-17-jre-headless when running as root with apt; else says how.
set -euo pipefail
source "$(dirname "$0")/lib/apt-install.sh"
has_java() { command -v java >/dev/null 2>&1 && java -version >/dev/null 2>&1; }
if ! has_java; then
  apt_install ensure-java "Java (DynamoDB Local needs 17+)" "on macOS: brew install openjdk@17" openjdk-17-jre-headless
  has_java || { echo "ensure-java: apt-get finished but java does not run" >&2; exit 1; }
fi
