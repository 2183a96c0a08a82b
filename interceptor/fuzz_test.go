package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/internal/restmpl"
	"github.com/zklockkit/zklockkit/zklock"
)

// validPlaceholder says, from the template language's and protobuf's own
// rules, whether a placeholder can name what the gRPC front end reads:
// {metadata:KEY} with a lower-case metadata key, or a dotted path of proto
// field names.
func validPlaceholder(p restmpl.Placeholder) bool {
	if p.Source == "metadata" {
		return p.Name != "" && strings.Trim(p.Name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == ""
	}
	for seg := range strings.SplitSeq(p.Name, ".") {
		if !protoreflect.Name(seg).IsValid() {
			return false
		}
	}
	return true
}

// scalarField are the field paths of a TransferRequest that hold a
// scalar: the only ones a template of Transfer may name.
var scalarField = map[string]bool{"account_id": true, "transfer.from": true, "transfer.to": true, "transfer.amount": true}

// FuzzTemplate drives the server interceptor with any resource template
// and any values in the call (metadata, fields of a bankpb.TransferRequest),
// calling it as gRPC would, over the MemoryLocker:
//   - a template is refused at set-up (the interceptor panics with an
//     error naming it, matching the template language's syntax error when
//     that is the cause) exactly when the language or protobuf's naming
//     rules refuse it, or it names a field the method's request type
//     lacks or that holds no scalar (WithMethod checks the template
//     against the type in the registry);
//   - otherwise the handler runs holding exactly the name the template
//     says, each value escaped, or the call is InvalidArgument when the
//     name is no valid resource or a value is missing; the handler does
//     not run then.

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"accounts/{account_id}", "t/{metadata:x-tenant}/{transfer.from}/{transfer.to}", "{transfer.amount}", "a/{transfer}",
		"{metadata:X-Upper}", "{1a}", "{a..b}", "{metadata:}", "{{lit}}/{account_id}", "{account_id}{transfer.to}", "x/{nosuch.field}", "lit"} {
		f.Add(s, "42", true)
	}
	f.Add("a/{metadata:k}", "", true)
	f.Add("a/{transfer.from}", "x/../\x00", false)
	locker := zklock.NewMemoryLocker()
	info := &grpc.UnaryServerInfo{FullMethod: bankpb.Bank_Transfer_FullMethodName}
	f.Fuzz(func(t *testing.T, tmpl, value string, withMetadata bool) {
		rt, perr := restmpl.Parse(tmpl, "metadata")
		valid := perr == nil
		for i := 0; valid && i < len(rt.Placeholders()); i++ {
			p := rt.Placeholders()[i]
			valid = validPlaceholder(p) && (p.Source == "metadata" || scalarField[p.Name])
		}
		ic, refused := build(locker, tmpl)
		if (refused != nil) != !valid {
			t.Fatalf("template %q: set-up refused %v; the language says %v, valid %v", tmpl, refused, perr, valid)
		}
		if refused != nil {
			if perr != nil && !errors.Is(refused, restmpl.ErrSyntax) || !strings.Contains(refused.Error(), fmt.Sprintf("%q", tmpl)) {
				t.Fatalf("template %q: set-up error %v does not name it or its syntax error", tmpl, refused)
			}
			return
		}

		fields := map[string]string{"account_id": "A" + value, "transfer.from": "F" + value, "transfer.to": "T" + value, "transfer.amount": "7"}
		req := &bankpb.TransferRequest{AccountId: fields["account_id"], Transfer: &bankpb.Transfer{From: fields["transfer.from"], To: fields["transfer.to"], Amount: 7}}
		md := metadata.MD{}
		want, missing, unknownField := "", false, false
		for i, lit := range rt.Literals() {
			want += lit
			if i == len(rt.Placeholders()) {
				break
			}
			p, v := rt.Placeholders()[i], ""
			if p.Source == "metadata" {
				if withMetadata {
					v = "M" + value
					md.Set(p.Name, v)
				}
			} else if fv, ok := fields[p.Name]; ok {
				v = fv
			} else {
				unknownField = true
			}
			missing = missing || v == ""
			want += restmpl.Value(v)
		}
		var held string
		_, err := ic(metadata.NewIncomingContext(context.Background(), md), req, info, func(ctx context.Context, _ any) (any, error) {
			held = zklock.LeaseFromContext(ctx).Resource()
			return nil, nil
		})
		switch code := status.Code(err); {
		case unknownField:
			if code != codes.Internal || held != "" {
				t.Fatalf("template %q names a field TransferRequest lacks: %v (held %q); want Internal", tmpl, err, held)
			}
		case missing || zklock.ValidateResource(want) != nil:
			if code != codes.InvalidArgument || held != "" || !interceptor.NotAcquired(err) {
				t.Fatalf("template %q, value %q: resource %q (a value missing: %v): %v, held %q; want InvalidArgument", tmpl, value, want, missing, err, held)
			}
		case err != nil || held != want:
			t.Fatalf("template %q, value %q: %v, held %q; want %q", tmpl, value, err, held, want)
		}
	})
}

// build returns the unary server interceptor that locks Transfer with
// tmpl, or the error it panicked with at set-up.
func build(l zklock.Locker, tmpl string) (ic grpc.UnaryServerInterceptor, err error) {
	defer func() {
		if r := recover(); r != nil {
			if err, _ = r.(error); err == nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}
	}()
	return interceptor.UnaryServerInterceptor(l, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource(tmpl))), nil
}
