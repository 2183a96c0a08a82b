#!/usr/bin/env bash
# Prints the shape of package zklock: non-test files and their largest,
# the exported API as `go doc -all` lists it (funcs, types, methods,
# consts and vars), the Client's methods (exported and not), and the
# packages under zklock/internal with their lines. docs/architecture.md
# quotes these figures.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(ls zklock/*.go | grep -v _test.go)
echo "files in zklock/: $(echo "$files" | wc -l)"
echo "largest: $(wc -l $files | grep -v total | sort -n | tail -1 | awk '{print $2, $1}')"
echo "lines in zklock/*.go: $(cat $files | wc -l)"
doc=$(go doc -all ./zklock)
funcs=$(echo "$doc" | grep -cE '^func ')
types=$(echo "$doc" | grep -cE '^type ')
names=$(echo "$doc" | awk '/^(const|var) \(/{b=1;next} b&&/^\)/{b=0} b&&/^\t[A-Z][A-Za-z0-9_]*( |$)/{n++} /^(const|var) [A-Z]/{n++} END{print n+0}')
echo "exported API (go doc -all ./zklock): $((funcs + types)) funcs, methods and types; $names consts and vars"
echo "Client methods: $(grep -hE '^func \(c \*Client\)' $files | wc -l)"
for d in $(find zklock/internal -mindepth 1 -maxdepth 1 -type d | sort); do
  echo "$d: $(ls $d/*.go | grep -vc _test.go) files, $(cat $(ls $d/*.go | grep -v _test.go) | wc -l) lines"
done
