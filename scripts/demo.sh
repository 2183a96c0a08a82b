#!/usr/bin/env bash
# README's first command: run the demo against ZKLOCK_SERVERS, or against a
# local ZooKeeper that it installs (when missing) and starts.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${ZKLOCK_SERVERS:-}" ]; then
  exec go run ./examples/basic "$@"
fi
scripts/ensure-zookeeper.sh
exec go run ./internal/cmd/withzk -- go run ./examples/basic "$@"
