package interceptor

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// lockedStream is the stream a locked handler sees: its context is the
// lease's, and its first RecvMsg returns the message the interceptor
// already read (FromFirstMessage).
type lockedStream struct {
	grpc.ServerStream
	ctx   context.Context
	first proto.Message // nil once handed over
}

func (s *lockedStream) Context() context.Context { return s.ctx }

func (s *lockedStream) RecvMsg(m any) error {
	if s.first == nil {
		return s.ServerStream.RecvMsg(m)
	}
	first := s.first
	s.first = nil
	dst, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "zklock: cannot hand the first message to a %T", m)
	}
	if dst.ProtoReflect().Descriptor() == first.ProtoReflect().Descriptor() {
		proto.Reset(dst)
		proto.Merge(dst, first)
		return nil
	}
	b, err := proto.Marshal(first)
	if err == nil {
		err = proto.Unmarshal(b, dst)
	}
	if err != nil {
		return status.Errorf(codes.Internal, "zklock: handing over the first message: %v", err)
	}
	return nil
}

// recvFirst reads a stream's first message for FromFirstMessage.
func recvFirst(ss grpc.ServerStream, m *method) (proto.Message, error) {
	msg, err := m.newInput()
	if err != nil {
		return nil, notAcquired(m.name, codes.Internal, zkMessage(err))
	}
	if err := ss.RecvMsg(msg); err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err
		}
		// io.EOF: the client closed its side without sending anything.
		return nil, notAcquired(m.name, codes.InvalidArgument, fmt.Sprintf("zklock: stream %s ended before its first message, which names the resource to lock", m.name))
	}
	return msg, nil
}
