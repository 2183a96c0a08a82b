package interceptor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

func TestInvalidOptionsPanic(t *testing.T) {
	m := bankpb.Bank_Transfer_FullMethodName
	for name, opt := range map[string]interceptor.Option{
		"unclosed":                      interceptor.WithMethod(m, interceptor.Resource("accounts/{id")),
		"stray close":                   interceptor.WithMethod(m, interceptor.Resource("accounts/id}")),
		"nested":                        interceptor.WithMethod(m, interceptor.Resource("{a{b}}")),
		"adjacent":                      interceptor.WithMethod(m, interceptor.Resource("{a}{b}")),
		"no slash between":              interceptor.WithMethod(m, interceptor.Resource("{a}-{b}")),
		"bad field":                     interceptor.WithMethod(m, interceptor.Resource("{1a}")),
		"empty field":                   interceptor.WithMethod(m, interceptor.Resource("{a..b}")),
		"bad metadata key":              interceptor.WithMethod(m, interceptor.Resource("{metadata:X-Upper}")),
		"empty metadata":                interceptor.WithMethod(m, interceptor.Resource("{metadata:}")),
		"empty template":                interceptor.WithMethod(m, interceptor.Resource("")),
		"no template":                   interceptor.WithMethod(m, interceptor.Resource()),
		"nil func":                      interceptor.WithMethod(m, interceptor.ResourceFrom(nil)),
		"negative max wait":             interceptor.WithMethod(m, interceptor.MaxWait(-time.Second)),
		"negative delay":                interceptor.WithMethod(m, interceptor.RetryDelay(-time.Second)),
		"short method name":             interceptor.WithMethod("Transfer"),
		"zero release":                  interceptor.WithReleaseTimeout(0),
		"listed twice":                  interceptor.WithMethod(m, interceptor.Resource("a/{id}", "b", "a/{id}")),
		"literal braces ok, bad source": interceptor.WithMethod(m, interceptor.Resource("{{x}}/{query:id}")),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("UnaryServerInterceptor accepted an invalid option")
				}
			}()
			interceptor.UnaryServerInterceptor(&zklock.Client{}, opt)
		})
	}
	t.Run("try and max wait", func(t *testing.T) {
		defer func() {
			if err, _ := recover().(error); !errors.Is(err, zklock.ErrInvalidOption) {
				t.Errorf("Try with MaxWait: panic %v; want an error matching zklock.ErrInvalidOption", err)
			}
		}()
		interceptor.UnaryServerInterceptor(&zklock.Client{}, interceptor.WithMethod(m, interceptor.Try(), interceptor.MaxWait(time.Second)))
	})
	t.Run("nil locker", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Errorf("StreamServerInterceptor accepted a nil Locker")
			}
		}()
		interceptor.StreamServerInterceptor(nil)
	})
	// Valid ones do not panic; a method the proto registry does not know
	// is checked at its first call.
	interceptor.UnaryServerInterceptor(&zklock.Client{},
		interceptor.WithMethod(m, interceptor.Resource("a/{account_id}/{transfer.from}/{metadata:x-e_f.g}", "lit")),
		interceptor.WithMethod("/other.v1.Svc/Call", interceptor.Resource("a/{b}/{c.d}")),
		interceptor.WithMatcher(nil))
}

func TestMatchService(t *testing.T) {
	m := interceptor.MatchService("bank.v1.Bank", "/other.Svc")
	for name, want := range map[string]bool{
		"/bank.v1.Bank/Transfer": true,
		"/other.Svc/Get":         true,
		"/bank.v1.Bank2/X":       false,
		"bank.v1.Bank/Transfer":  false,
		"/bank.v1.Bank/":         false,
	} {
		if got := m.Match(name); got != want {
			t.Errorf("Match(%q) = %v; want %v", name, got, want)
		}
	}
}

func TestWaitFromTrailer(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"12.5": 12500 * time.Microsecond,
		"0":    0,
		"3":    3 * time.Millisecond,
	} {
		got, ok := interceptor.WaitFromTrailer(metadata.Pairs(interceptor.WaitTrailerKey, v))
		if !ok || got != want {
			t.Errorf("WaitFromTrailer(%q) = %v, %v; want %v", v, got, ok, want)
		}
	}
	for _, md := range []metadata.MD{nil, metadata.Pairs(interceptor.WaitTrailerKey, "x"), metadata.Pairs(interceptor.WaitTrailerKey, "-1")} {
		if _, ok := interceptor.WaitFromTrailer(md); ok {
			t.Errorf("WaitFromTrailer(%v) reported a value", md)
		}
	}
}

// TestIntegration_TemplateValues calls the interceptor function directly
// (no gRPC transport) with a real Locker, for message types the bank proto
// does not have.
func TestIntegration_TemplateValues(t *testing.T) {
	root := rootFor(t)
	locker := connect(t, root)
	t.Cleanup(func() { checkNoLockNodes(t, locker.Conn(), root) })
	const method = "/test.Svc/Method"
	field := func(mut func(f *descriptorpb.FieldDescriptorProto)) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name:           proto.String("x"),
			Number:         proto.Int32(7),
			Label:          descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Proto3Optional: proto.Bool(true),
			Options:        &descriptorpb.FieldOptions{Deprecated: proto.Bool(false)},
		}
		if mut != nil {
			mut(f)
		}
		return f
	}
	for _, tc := range []struct {
		template string
		req      proto.Message
		md       metadata.MD
		want     string // resource, or the status code's name
	}{
		{"f/{name}/{label}/{proto3_optional}/{number}", field(nil), nil, "f/x/LABEL_OPTIONAL/true/7"},
		{"f/{options.deprecated}", field(nil), nil, "f/false"},
		{"f/{number}", field(func(f *descriptorpb.FieldDescriptorProto) { f.Number = proto.Int32(-3) }), nil, "f/-3"},
		{"f/{label}", field(func(f *descriptorpb.FieldDescriptorProto) { f.Label = nil }), nil, "InvalidArgument"},
		{"f/{options.deprecated}", field(func(f *descriptorpb.FieldDescriptorProto) { f.Options = nil }), nil, "InvalidArgument"},
		{"f/{name}", field(func(f *descriptorpb.FieldDescriptorProto) { f.Name = proto.String("a/b%c") }), nil, "f/a%2Fb%25c"},
		{"f/{name}", field(func(f *descriptorpb.FieldDescriptorProto) { f.Name = proto.String("") }), nil, "InvalidArgument"},
		{"t/{metadata:x-tenant}/{name}", field(nil), metadata.Pairs("x-tenant", "acme"), "t/acme/x"},
		{"t/{metadata:x-tenant}", field(nil), nil, "InvalidArgument"},
		{"f/{options}", field(nil), nil, "Internal"},                      // a message is no value
		{"f/{name.x}", field(nil), nil, "Internal"},                       // a string has no fields
		{"f/{options.uninterpreted_option}", field(nil), nil, "Internal"}, // repeated
		{"f/{no_such_field}", field(nil), nil, "Internal"},
	} {
		t.Run(tc.template+"="+tc.want, func(t *testing.T) {
			unary := interceptor.UnaryServerInterceptor(locker, interceptor.WithMethod(method, interceptor.Resource(tc.template)))
			ctx := callCtx(t)
			if tc.md != nil {
				ctx = metadata.NewIncomingContext(ctx, tc.md)
			}
			var got string
			_, err := unary(ctx, tc.req, &grpc.UnaryServerInfo{FullMethod: method}, func(ctx context.Context, req any) (any, error) {
				got = zklock.LeaseFromContext(ctx).Resource()
				return nil, nil
			})
			if err != nil {
				got = status.Code(err).String()
			}
			if got != tc.want {
				t.Errorf("got %q (%v); want %q", got, err, tc.want)
			}
		})
	}
}
