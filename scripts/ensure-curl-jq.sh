#!/usr/bin/env bash
# The README's round trip is curl and jq, and the suite runs it as written (Debian's packages).
set -euo pipefail

if command -v curl >/dev/null 2>&1 && command -v jq >/dev/null 2>&1; then
  exit 0
fi
echo "Installing Debian's curl and jq for the README's round trip"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq curl jq >/dev/null
jq --version
