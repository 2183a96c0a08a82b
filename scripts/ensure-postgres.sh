#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (Debian package "postgresql") are
# installed, for the fence tests (internal/pgtest starts throwaway
# clusters; no server needs to run): installs them when missing and running
# as root, else prints the command and fails. The package list lives in
# ensure-test-deps.sh.
exec "$(dirname "$0")/ensure-test-deps.sh" --strict postgres
