// Package promtest starts a throwaway Prometheus server for tests, the way
// package zktest starts ZooKeeper and pgtest PostgreSQL.
//
// Prometheus must be installed from the Debian package:
//
//	apt-get update && apt-get install -y prometheus
//
// which puts prometheus and promtool in /usr/bin (scripts/ensure-test-deps.sh
// installs it as the "prometheus" component). Without them Start fails with
// ErrNotInstalled, whose message holds the install command.
//
// Start writes a configuration that scrapes the given targets and loads
// the given rule files, and starts prometheus on a free 127.0.0.1 port with
// its data in a new temporary directory and exemplar storage on; on Linux
// the server is killed if the process that started it dies. Query,
// QueryRange, Rules and Exemplars read its HTTP API. Close stops it and
// removes the directory.
//
// The package is internal: it serves this module's tests of the metrics,
// the dashboard and the alert rules.
package promtest
