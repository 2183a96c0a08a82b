package tracing_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// sentinelTypes is every sentinel error zklock exports, by name, with its
// error.type (TestErrorTypeKnowsEverySentinel keeps the list whole).
var sentinelTypes = []struct {
	name string
	err  error
	want string
}{
	{"ErrLeaseLost", zklock.ErrLeaseLost, "lease_lost"},
	{"ErrSessionExpired", zklock.ErrSessionExpired, "session_expired"},
	{"ErrUnavailable", zklock.ErrUnavailable, "unavailable"},
	{"ErrClosed", zklock.ErrClosed, "closed"},
	{"ErrLocked", zklock.ErrLocked, "locked"},
	{"ErrWaitTimeout", zklock.ErrWaitTimeout, "wait_timeout"},
	{"ErrInvalidResource", zklock.ErrInvalidResource, "invalid_resource"},
	{"ErrInvalidOption", zklock.ErrInvalidOption, "invalid_option"},
	{"ErrNoAuth", zklock.ErrNoAuth, "no_auth"},
	{"ErrUpgrade", zklock.ErrUpgrade, "upgrade"},
	{"ErrLimitMismatch", zklock.ErrLimitMismatch, "limit_mismatch"},
	{"ErrValueTooLarge", zklock.ErrValueTooLarge, "value_too_large"},
	{"ErrUnknownNode", zklock.ErrUnknownNode, "unknown_node"},
	{"ErrDowngradeBlocked", zklock.ErrDowngradeBlocked, "downgrade_blocked"},
	{"ErrReleased", zklock.ErrReleased, "released"},
	{"ErrNoLeader", zklock.ErrNoLeader, "no_leader"},
}

// notLockErrors are zklock's sentinels that no lock operation returns, so
// that no span or metric of package tracing carries them, with the reason.
var notLockErrors = map[string]string{
	"ErrFlightRecorderBusy": "returned only by NewFlightRecorder",
}

// The sentinel list above names every exported Err variable of package
// zklock, read from its source, but those of notLockErrors: a sentinel
// added to zklock without an error.type of its own fails here (ErrorType
// would call it "other").
func TestErrorTypeKnowsEverySentinel(t *testing.T) {
	entries, err := os.ReadDir("../zklock")
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("../zklock", e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						exported = append(exported, n.Name)
					}
				}
			}
		}
	}
	if len(exported) == 0 {
		t.Fatal("found no Err variable in ../zklock: the parse looked in the wrong place")
	}
	var listed []string
	for _, s := range sentinelTypes {
		listed = append(listed, s.name)
	}
	for _, name := range exported {
		if _, ok := notLockErrors[name]; !ok && !slices.Contains(listed, name) {
			t.Errorf("zklock.%s has no error.type in sentinelTypes (and none in ErrorType's list, most likely)", name)
		}
	}
	for _, name := range listed {
		if !slices.Contains(exported, name) {
			t.Errorf("sentinelTypes names zklock.%s, which zklock no longer exports", name)
		}
	}
	for name := range notLockErrors {
		if !slices.Contains(exported, name) {
			t.Errorf("notLockErrors names zklock.%s, which zklock no longer exports", name)
		}
	}
}

// Every sentinel of zklock, and the context errors, has its own error.type,
// wrapped or not; the value set is the documented one.
func TestErrorType(t *testing.T) {
	type tcase struct {
		err  error
		want string
	}
	var cases []tcase
	for _, s := range sentinelTypes {
		cases = append(cases, tcase{s.err, s.want})
	}
	for _, tc := range append(cases, []tcase{
		{context.DeadlineExceeded, "deadline_exceeded"},
		{context.Canceled, "canceled"},
		{errors.New("boom"), tracing.ErrorTypeOther},
		{nil, tracing.ErrorTypeOther},
		// Errors that match several: the documented order decides.
		{&zklock.ResourceError{Resource: "x", Reason: "bad"}, "invalid_resource"},
		{&zklock.LostError{Resource: "x", Reason: zklock.LossSessionExpired}, "lease_lost"},
		{&zklock.LostError{Resource: "x", Reason: zklock.LossClientClosed}, "lease_lost"},
		{fmt.Errorf("%w: %w", zklock.ErrUnavailable, context.DeadlineExceeded), "unavailable"},
		{fmt.Errorf("%w: %w", zklock.ErrUnavailable, context.Canceled), "unavailable"},
	}...) {
		for _, err := range []error{tc.err, fmt.Errorf("zklock: acquire %q: %w", "a", tc.err)} {
			if tc.err == nil && err != nil {
				continue
			}
			if got := tracing.ErrorType(err); got != tc.want {
				t.Errorf("ErrorType(%v) = %q, want %q", err, got, tc.want)
			}
		}
	}
}
