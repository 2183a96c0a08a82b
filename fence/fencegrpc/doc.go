// Package fencegrpc carries a fencing token across gRPC calls: client
// interceptors add the token of the lease in the call's context as
// metadata, and FromIncoming reads it on the server, for fence.Fence.Guard.
// It is the gRPC half of what fence.Transport and fence.FromRequest do for
// HTTP, kept apart so that package fence imports no gRPC.
//
// # Client
//
//	conn, err := grpc.NewClient(addr,
//		grpc.WithChainUnaryInterceptor(fencegrpc.UnaryClientInterceptor()),
//		grpc.WithChainStreamInterceptor(fencegrpc.StreamClientInterceptor()),
//		...)
//
// A call made under a lease's context (lease.Context(ctx), or the context
// a zklock adapter hands a handler) carries MetadataKey with the lease's
// token and resource; other calls go out unchanged.
//
// # Server
//
//	func (s *server) Withdraw(ctx context.Context, req *pb.WithdrawRequest) (*pb.WithdrawResponse, error) {
//		tx, err := s.db.BeginTx(ctx, nil)
//		...
//		if err := fencegrpc.Guard(ctx, s.fence, tx); err != nil { ... }
//
// Metadata is whatever the peer sends: accept tokens only from
// authenticated peers (mutual TLS, for instance). See package fence on
// what a token proves and what it does not.
package fencegrpc
