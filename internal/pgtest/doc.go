// Package pgtest starts throwaway PostgreSQL clusters for tests, examples
// and benchmarks, the way package zktest starts ZooKeeper.
//
// PostgreSQL must be installed from the Debian package:
//
//	apt-get update && apt-get install -y postgresql
//
// which puts initdb and postgres in /usr/lib/postgresql/<version>/bin (the
// newest version found there is used; elsewhere, initdb on PATH). Installed
// reports whether they are present; without them Start fails with
// ErrNotInstalled, whose message holds the install command.
//
// Start runs initdb into a new temporary directory and starts postgres on
// a free 127.0.0.1 port, with its unix socket in that directory, trust
// authentication and, by default, fsync off. As root it runs both as the
// "postgres" user (they refuse to run as root), owning the directory;
// otherwise as the current user. On Linux the server is killed if the
// process that started it dies. Close stops it and removes the directory.
//
// The package is internal: it serves this module's tests and examples;
// users who test their own fenced code against PostgreSQL have their own
// way to run it.
package pgtest
