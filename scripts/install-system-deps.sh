#!/usr/bin/env bash
# System packages the tests and the local stack need (Debian). Node 24 itself comes from the
# `node` devDependency, so the machine's own node version does not matter.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-system-deps: please install: ${missing[*]} (needs root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The Debian package starts a system-wide redis on 6379; the tests start their own on free ports.
  (service redis-server stop || systemctl stop redis-server || true) >/dev/null 2>&1
fi
