#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the dch-etcd library tests (test_etcd) against one etcd member started
# for them on loopback. Usage: run_lib.sh TEST_PROGRAM [criterion args]
# Environment: ETCD, ETCDCTL (the binaries).
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/etcd_ctl.sh"
trap etcd_cleanup EXIT
etcd_start 1
export DCH_ETCD_URL=${ETCD_URL[0]}
export DCH_ETCD_DEAD_URL="http://127.0.0.1:$(free_port)"
export ETCDCTL
"$@"
