#!/usr/bin/env bash
# Install the Debian packages libdch's build, tests and analysis need, and
# only those that are missing: `apt-get update` runs only when something must
# be installed, so a second run on a ready machine touches nothing.
#
# Usage: bash tests/deps.sh [extra-package ...]
set -euo pipefail

packages=(
    cmake make gcc clang libclang-rt-dev pkg-config binutils
    libcriterion-dev libsodium-dev
    valgrind gnuplot-nox
    libhiredis-dev redis-server
    libcurl4-openssl-dev libjson-c-dev etcd-server etcd-client
)
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "deps: missing ${missing[*]} and not root (no sudo)" >&2
        exit 1
    }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
