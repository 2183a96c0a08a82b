package fencegrpc

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/zklockkit/zklockkit/fence"
)

// MetadataKey is the metadata key that carries a fencing token, in the
// form fence.Token.String writes ("4294967302 accounts%2F42"): the
// lower-case form of fence.Header.
const MetadataKey = "zklock-fence-token"

// OutgoingContext returns ctx with the token of the lease it carries added
// to its outgoing metadata, if it carries a lease that can be fenced
// (fence.ContextToken) and its outgoing metadata has no token yet;
// otherwise ctx itself. The interceptors call it; a client interceptor of
// another package can too.
func OutgoingContext(ctx context.Context) context.Context {
	t, ok := fence.ContextToken(ctx)
	if !ok {
		return ctx
	}
	if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md.Get(MetadataKey)) > 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, MetadataKey, t.String())
}

// UnaryClientInterceptor adds the token of the lease in a call's context
// to its metadata (OutgoingContext).
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(OutgoingContext(ctx), method, req, reply, cc, opts...)
	}
}

// StreamClientInterceptor adds the token of the lease in a stream's
// context to its metadata (OutgoingContext).
func StreamClientInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(OutgoingContext(ctx), desc, cc, method, opts...)
	}
}

// FromIncoming returns the token carried by an incoming call's metadata:
// fence.ErrNoToken if there is none, fence.ErrInvalidToken if there are
// several or it does not parse.
func FromIncoming(ctx context.Context) (fence.Token, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vs := md.Get(MetadataKey)
	switch len(vs) {
	case 0:
		return fence.Token{}, fmt.Errorf("%w: the call has no %s metadata", fence.ErrNoToken, MetadataKey)
	case 1:
		return fence.ParseToken(vs[0])
	}
	return fence.Token{}, fmt.Errorf("%w: %d %s values", fence.ErrInvalidToken, len(vs), MetadataKey)
}

// Guard is f.Guard with the token an incoming call carries
// (FromIncoming).
func Guard(ctx context.Context, f *fence.Fence, tx fence.Tx) error {
	t, err := FromIncoming(ctx)
	if err != nil {
		return err
	}
	return f.Guard(ctx, tx, t)
}
