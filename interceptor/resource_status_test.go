package interceptor_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

// A call refused because its resource cannot be computed (a value that
// makes no valid name, a missing value, a field the request's type lacks)
// never reached its handler: its status is marked NotAcquired, as every
// refusal before the handler is (docs/adapters.md). Before, only refusals
// of the acquire itself were (found by FuzzTemplate).
func TestResourceRefusalIsMarkedNotAcquired(t *testing.T) {
	info := &grpc.UnaryServerInfo{FullMethod: bankpb.Bank_Transfer_FullMethodName}
	for tmpl, want := range map[string]codes.Code{
		"a/{transfer.from}":   codes.InvalidArgument, // "x\x00": a control character
		"a/{account_id}":      codes.InvalidArgument, // empty
		"a/{transfer.nosuch}": codes.Internal,        // the server's template: a matcher's method is checked at the call
	} {
		all := interceptor.MatchFunc(func(string) bool { return true })
		ic := interceptor.UnaryServerInterceptor(zklock.NewMemoryLocker(), interceptor.WithMatcher(all, interceptor.Resource(tmpl)))
		ran := false
		_, err := ic(context.Background(), &bankpb.TransferRequest{Transfer: &bankpb.Transfer{From: "x\x00"}}, info,
			func(context.Context, any) (any, error) { ran = true; return nil, nil })
		if status.Code(err) != want || ran || !interceptor.NotAcquired(err) {
			t.Errorf("%s: %v (handler ran: %v, marked: %v); want %v marked NotAcquired", tmpl, err, ran, interceptor.NotAcquired(err), want)
		}
	}
}
