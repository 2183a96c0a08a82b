package crossadapter_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/interceptor"
	zkmw "github.com/zklockkit/zklockkit/middleware"
	zkecho4 "github.com/zklockkit/zklockkit/middleware/zkecho"
	zkecho5 "github.com/zklockkit/zklockkit/middleware/zkecho/v5"
	"github.com/zklockkit/zklockkit/zklock"
)

// One option means one thing, with one error, through every front end: a
// misuse of an option shared by the HTTP middleware (net/http, Echo v4,
// Echo v5) and the gRPC interceptors is refused by each with an error
// that says the same words and, where zklock has the same rule, matches
// zklock.ErrInvalidOption.
func TestSameOptionsSameErrors(t *testing.T) {
	locker := zklock.NewMemoryLocker()
	const method = "/cross.Svc/Lock"
	type misuse struct {
		name    string
		words   string
		invalid bool // matches zklock.ErrInvalidOption
		http    []zkmw.Option
		echo4   []zkecho4.Option
		echo5   []zkecho5.Option
		grpc    []interceptor.MethodOption
	}
	for _, m := range []misuse{
		{"negative MaxWait", "negative MaxWait -1s", true,
			[]zkmw.Option{zkmw.MaxWait(-time.Second)}, []zkecho4.Option{zkecho4.MaxWait(-time.Second)},
			[]zkecho5.Option{zkecho5.MaxWait(-time.Second)}, []interceptor.MethodOption{interceptor.MaxWait(-time.Second)}},
		{"Try with MaxWait", "Try and MaxWait exclude each other", true,
			[]zkmw.Option{zkmw.Try(), zkmw.MaxWait(time.Second)}, []zkecho4.Option{zkecho4.Try(), zkecho4.MaxWait(time.Second)},
			[]zkecho5.Option{zkecho5.Try(), zkecho5.MaxWait(time.Second)}, []interceptor.MethodOption{interceptor.Try(), interceptor.MaxWait(time.Second)}},
		{"no template", "Resource: no template given", false,
			[]zkmw.Option{zkmw.Resource()}, []zkecho4.Option{zkecho4.Resource()},
			[]zkecho5.Option{zkecho5.Resource()}, []interceptor.MethodOption{interceptor.Resource()}},
		{"empty template", `resource template "": empty template (at byte 0)`, false,
			[]zkmw.Option{zkmw.Resource("")}, []zkecho4.Option{zkecho4.Resource("")},
			[]zkecho5.Option{zkecho5.Resource("")}, []interceptor.MethodOption{interceptor.Resource("")}},
		{"empty template among others", `resource template "": empty template (at byte 0)`, false,
			[]zkmw.Option{zkmw.Resource("a", "")}, []zkecho4.Option{zkecho4.Resource("a", "")},
			[]zkecho5.Option{zkecho5.Resource("a", "")}, []interceptor.MethodOption{interceptor.Resource("a", "")}},
		{"template twice", `resource template "a/{id}" is listed twice`, false,
			[]zkmw.Option{zkmw.Resource("a/{id}", "b", "a/{id}")}, []zkecho4.Option{zkecho4.Resource("a/{id}", "b", "a/{id}")},
			[]zkecho5.Option{zkecho5.Resource("a/{id}", "b", "a/{id}")}, []interceptor.MethodOption{interceptor.Resource("a/{id}", "b", "a/{id}")}},
	} {
		errs := map[string]error{
			"net/http": recovered(func() { zkmw.Lock(locker, m.http...) }),
			"echo v4":  recovered(func() { zkecho4.Lock(locker, m.echo4...) }),
			"echo v5":  recovered(func() { zkecho5.Lock(locker, m.echo5...) }),
			"grpc":     recovered(func() { interceptor.UnaryServerInterceptor(locker, interceptor.WithMethod(method, m.grpc...)) }),
		}
		for fe, err := range errs {
			switch {
			case err == nil || !strings.HasSuffix(err.Error(), m.words):
				t.Errorf("%s, %s: %v; want an error ending %q", m.name, fe, err, m.words)
			case m.invalid && !errors.Is(err, zklock.ErrInvalidOption):
				t.Errorf("%s, %s: %v does not match zklock.ErrInvalidOption", m.name, fe, err)
			case fe != "grpc" && !errors.Is(err, zkmw.ErrInvalidConfig):
				t.Errorf("%s, %s: %v does not match middleware.ErrInvalidConfig", m.name, fe, err)
			}
		}
	}
}

// recovered runs f and returns what it panicked with, as an error.
func recovered(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if err, _ = r.(error); err == nil {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	f()
	return nil
}
