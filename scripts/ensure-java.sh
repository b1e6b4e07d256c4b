#!/usr/bin/env bash
# DynamoDB Local (tests and `npm start`) needs a Java runtime, 17 or later.
# Finds it, or installs Debian's openjdk-17-jre-headless when running as root with apt; else says how.
set -euo pipefail
if command -v java >/dev/null 2>&1 && java -version >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-java: installing openjdk-17-jre-headless (DynamoDB Local needs Java)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  exit 0
fi
echo "ensure-java: Java is missing. DynamoDB Local needs Java 17+: apt-get install openjdk-17-jre-headless (Debian/Ubuntu) or brew install openjdk@17 (macOS)." >&2
exit 1
