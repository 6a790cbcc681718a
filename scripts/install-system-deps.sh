#!/usr/bin/env bash
# What the tests need beyond node_modules, installed when missing (Debian): redis-server (the cache
# tier's tests start their own on free loopback ports, single nodes and a TLS Redis Cluster, whose
# throw-away CA and certificates openssl makes) and git (the documentation
# tests list the repository's files). `npm test` runs this first; Node 24 itself comes from the `node`
# devDependency.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v git >/dev/null 2>&1 || missing+=(git)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "npm test needs ${missing[*]}, which this machine lacks, and can install it only as root on Debian." >&2
  echo "Install it yourself (Debian/Ubuntu: sudo apt-get install ${missing[*]}; macOS: brew install redis), then run npm test again." >&2
  exit 1
fi
echo "npm test: installing ${missing[*]} (Debian packages)…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The Debian package starts a system-wide redis on 6379; the tests start their own on free ports.
(service redis-server stop || systemctl stop redis-server || true) >/dev/null 2>&1
