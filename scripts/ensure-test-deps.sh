#!/usr/bin/env bash
# The one list of what zklockkit's tests need from Debian, and the one place
# that installs it. Used by `make test` (every component), by
# ensure-zookeeper.sh and ensure-postgres.sh (one component each), and so
# by `make demo`, `make bench`, `make chaos` and CI.
#
# Usage: scripts/ensure-test-deps.sh [--strict] [COMPONENT...]
#
# COMPONENT is one of (default: all):
#   zookeeper  the ZooKeeper server every integration test starts  (zookeeper)
#   curator    Apache Curator, the Java interop peer               (libcurator-*-java)
#   jdk        javac, to compile the Curator peer                  (default-jdk-headless)
#   kazoo      kazoo, the Python interop peer                      (python3-kazoo)
#   chromium   headless Chromium, the zkdebug page test            (chromium)
#   prometheus Prometheus and promtool, the dashboard and rules test (prometheus)
#   postgres   PostgreSQL's binaries, the fence tests              (postgresql)
#   shells     zsh and fish, to check zklock's completion scripts  (zsh fish)
#   tmux       a real terminal for zklock top's live view test      (tmux)
#   git        a clone to build for zklock --version's test          (git)
#
# What is missing is installed when running as root with apt-get (one
# `apt-get update`, one `apt-get install`), and the script says what it
# installs and why. Otherwise it prints the install command. Exit status:
# 0 when everything asked for is present or was installed; 1 when the
# install failed, or when something is missing and cannot be installed and
# it is ZooKeeper (no integration test runs without it) or --strict was
# given. Without --strict a missing peer is a warning: the tests that need
# it fail, each naming the install command.
#
# Environment: ZKLOCK_NO_INSTALL=1 never installs (print only), even as
# root. ZKLOCK_SYSROOT prefixes the files looked at (for the script's own
# test, with fake apt-get and id on PATH).
set -euo pipefail

me=ensure-test-deps
sysroot=${ZKLOCK_SYSROOT:-}
strict=0
if [ "${1:-}" = "--strict" ]; then
  strict=1
  shift
fi
all="zookeeper curator jdk kazoo chromium prometheus postgres shells tmux git"
wanted=${*:-$all}

# packages COMPONENT: the Debian packages that provide it.
packages() {
  case $1 in
    zookeeper) echo "zookeeper" ;;
    curator) echo "libcurator-recipes-java libcurator-framework-java libcurator-client-java" ;;
    jdk) echo "default-jdk-headless" ;;
    kazoo) echo "python3-kazoo" ;;
    chromium) echo "chromium" ;;
    prometheus) echo "prometheus" ;;
    postgres) echo "postgresql" ;;
    shells) echo "zsh fish" ;;
    tmux) echo "tmux" ;;
    git) echo "git" ;;
    *) echo "$me: unknown component '$1' (one of: $all)" >&2; exit 2 ;;
  esac
}

# purpose COMPONENT: what needs it, in a few words.
purpose() {
  case $1 in
    zookeeper) echo "the ZooKeeper server of every integration test" ;;
    curator) echo "the Curator interop tests" ;;
    jdk) echo "javac for the Curator interop tests" ;;
    kazoo) echo "the kazoo interop tests" ;;
    chromium) echo "the zkdebug page test" ;;
    prometheus) echo "the dashboard and alert rules test" ;;
    postgres) echo "the fence tests on PostgreSQL" ;;
    shells) echo "the zklock completion script tests" ;;
    tmux) echo "the zklock top terminal tests" ;;
    git) echo "the zklock --version test" ;;
  esac
}

# present COMPONENT: whether it is installed.
present() {
  local j d
  case $1 in
    zookeeper)
      command -v java >/dev/null 2>&1 &&
        [ -f "$sysroot/usr/share/java/zookeeper.jar" ] && [ -f "$sysroot/usr/share/java/slf4j-simple.jar" ]
      ;;
    curator)
      for j in curator-recipes curator-framework curator-client; do
        [ -f "$sysroot/usr/share/java/$j.jar" ] || return 1
      done
      ;;
    jdk) command -v javac >/dev/null 2>&1 ;;
    kazoo) [ -x "$sysroot/usr/bin/python3" ] && "$sysroot/usr/bin/python3" -c 'import kazoo' >/dev/null 2>&1 ;;
    chromium) command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ;;
    prometheus) command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 ;;
    postgres)
      for d in "$sysroot"/usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pg_isready" ] && return 0
      done
      command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1 && command -v pg_isready >/dev/null 2>&1
      ;;
    shells) command -v zsh >/dev/null 2>&1 && command -v fish >/dev/null 2>&1 ;;
    tmux | git) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

for c in $wanted; do
  packages "$c" >/dev/null
done

missing="" pkgs=""
for c in $wanted; do
  p=$(packages "$c")
  if ! present "$c"; then
    missing="$missing $c"
    pkgs="$pkgs $p"
  fi
done
missing=${missing# } pkgs=${pkgs# }
[ -z "$missing" ] && exit 0

install_cmd="apt-get update && apt-get install -y $pkgs"
if [ "${ZKLOCK_NO_INSTALL:-}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  for c in $missing; do
    echo "$me: installing $(packages "$c") ($(purpose "$c"))" >&2
  done
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if ! apt-get update -qq >"$log" 2>&1 ||
    ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >>"$log" 2>&1; then
    cat "$log" >&2
    echo "$me: installing failed: $install_cmd" >&2
    exit 1
  fi
  for c in $missing; do
    if ! present "$c"; then
      echo "$me: $(packages "$c") installed, but $c is still not usable" >&2
      exit 1
    fi
  done
  echo "$me: installed $pkgs" >&2
  exit 0
fi

for c in $missing; do
  echo "$me: missing $(packages "$c") ($(purpose "$c"))" >&2
done
echo "$me: install as root with:" >&2
echo "  $install_cmd" >&2
case " $missing " in
  *" zookeeper "*)
    echo "$me: or point ZKLOCK_SERVERS at a running ensemble (make demo)." >&2
    exit 1
    ;;
esac
if [ "$strict" = 1 ]; then
  exit 1
fi
echo "$me: going on: the tests that need these fail, naming the same command." >&2
exit 0
