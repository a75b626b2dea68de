#!/usr/bin/env bash
# `make prod` puts nginx (Debian's package) in front of gunicorn and daphne.
set -euo pipefail

if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
  exit 0
fi
echo "Installing Debian's nginx-light for make prod"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
# make prod runs its own nginx with a generated config, on its own port; the package's
# service (if the machine starts it) is left alone.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light >/dev/null
/usr/sbin/nginx -v
