#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (Debian package "postgresql") are
# installed, for the fence tests (internal/pgtest starts throwaway
# clusters; no server needs to run): installs them when missing and
# running as root, else prints the command.
set -euo pipefail
for d in /usr/lib/postgresql/*/bin; do
  if [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pg_isready" ]; then
    exit 0
  fi
done
if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1 && command -v pg_isready >/dev/null 2>&1; then
  exit 0
fi
install_cmd="apt-get update && apt-get install -y postgresql"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-postgres: installing PostgreSQL: $install_cmd" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  exit 0
fi
echo "ensure-postgres: PostgreSQL is not installed. Install it as root with:" >&2
echo "  $install_cmd" >&2
exit 1
