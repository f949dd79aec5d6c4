#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages libdch's build, tests and analysis need, and
# only those that are missing: `apt-get update` runs only when something must
# be installed, so a second run on a ready machine touches nothing.
#
# The line of scdoc ... jq renders and checks the man pages, holds the
# shared libraries to their ABI baselines (abigail-tools), builds and
# checks the Debian packages, and reads etcd's JSON in the fault tests (jq).
#
# The group before it is optional for the build (CMake skips the explorer and its
# browser test without them) but installed all the same, so the README's
# commands build and test everything: emscripten compiles the explorer to
# WebAssembly, chromium and Node.js drive it in the browser test, python3
# serves it for explorer/run. npm comes with some Node.js packages; Debian's
# is installed only when no npm is found.
#
# Usage: bash tests/deps.sh [extra-package ...]
set -euo pipefail

packages=(
    build-essential cmake make gcc clang libclang-rt-dev pkg-config binutils
    libcriterion-dev libsodium-dev
    valgrind gnuplot-nox chromium
    libhiredis-dev redis-server
    libmemcached-dev
    libcurl4-openssl-dev libjson-c-dev etcd-server etcd-client
    emscripten nodejs python3
    scdoc groff-base man-db abigail-tools dpkg-dev debhelper lintian jq
)
command -v npm >/dev/null || packages+=(npm)
packages+=("$@")

arch=$(dpkg --print-architecture)
missing=()
for p in "${packages[@]}"; do
    # Installed for this machine's architecture (or for all): a package
    # installed only for another one (libcriterion-dev:i386) does not count.
    dpkg-query -W -f='${Status} ${Architecture}\n' "$p" 2>/dev/null |
        grep -Eqx "install ok installed ($arch|all)" || missing+=("$p")
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
