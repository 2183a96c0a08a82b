#!/usr/bin/env bash
# Makes sure Apache ZooKeeper (Debian package "zookeeper") is installed:
# installs it when missing and running as root, else prints the command.
set -euo pipefail
if command -v java >/dev/null 2>&1 && [ -f /usr/share/java/zookeeper.jar ] && [ -f /usr/share/java/slf4j-simple.jar ]; then
  exit 0
fi
install_cmd="apt-get update && apt-get install -y zookeeper"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-zookeeper: installing ZooKeeper: $install_cmd" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper >/dev/null
  exit 0
fi
echo "ensure-zookeeper: ZooKeeper is not installed. Install it as root with:" >&2
echo "  $install_cmd" >&2
echo "or point ZKLOCK_SERVERS at a running ensemble." >&2
exit 1
