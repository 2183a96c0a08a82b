package zktest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

var shared atomic.Pointer[Server]

// Main starts one shared standalone server for a package's tests, runs m,
// closes the server and exits with m's status. Call it from TestMain. If
// ZooKeeper is not installed or the server does not start, it prints why
// (with the install command) to stderr and exits 1: tests never skip
// silently.
func Main(m *testing.M, opts ...Option) {
	os.Exit(runMain(m, opts))
}

func runMain(m *testing.M, opts []Option) int {
	if err := Installed(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := StartServer(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared.Store(s)
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "zktest: closing shared server:", err)
		}
	}()
	return m.Run()
}

// Shared returns the server started by Main. It panics if Main is not in
// use.
func Shared() *Server {
	s := shared.Load()
	if s == nil {
		panic("zktest: Shared called without zktest.Main in TestMain")
	}
	return s
}

// UniqueRoot returns a fresh znode path "/zktest/<TestName>-<random>" for
// isolating tests that share a server. It does not create the node; the
// caller creates "/zktest" and the root as needed.
func UniqueRoot(t testing.TB) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, t.Name())
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "/zktest/" + name + "-" + hex.EncodeToString(b)
}
