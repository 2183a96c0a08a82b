#!/usr/bin/env bash
# Makes sure Apache ZooKeeper (Debian package "zookeeper") is installed:
# installs it when missing and running as root, else prints the command and
# fails. The package list lives in ensure-test-deps.sh.
exec "$(dirname "$0")/ensure-test-deps.sh" --strict zookeeper
