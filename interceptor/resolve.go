package interceptor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/zklockkit/zklockkit/internal/keycache"
	"github.com/zklockkit/zklockkit/zklock"
)

// method is what the interceptor knows about one full method name: its lock
// configuration (nil: not locked) and, for FromFirstMessage streams, the
// type of its input message, looked up once.
type method struct {
	name string
	cfg  *methodConfig

	inputOnce sync.Once
	input     protoreflect.MessageType
	inputErr  error

	logged atomic.Bool // a misconfiguration was logged
}

// methods resolves and remembers which methods are locked, and how.
type methods struct {
	opts  *options
	cache keycache.Map[*method] // full method name → its method
}

func (ms *methods) get(fullMethod string) *method {
	return ms.cache.Get(fullMethod, func(name string) *method { return &method{name: name, cfg: ms.lookup(name)} })
}

func (ms *methods) lookup(fullMethod string) *methodConfig {
	o := ms.opts
	if cfg, ok := o.exact[fullMethod]; ok {
		return cfg
	}
	for _, r := range o.matchers {
		if r.m.Match(fullMethod) {
			return r.cfg
		}
	}
	if !o.selective() {
		cfg, _ := newMethodConfig(nil)
		return cfg
	}
	return nil
}

// resources computes the resources a call locks, appended to rs. msg is
// the request (the first message of a stream, or nil).
func (m *method) resources(ctx context.Context, msg any, rs []string) ([]string, error) {
	cfg := m.cfg
	switch {
	case cfg.templates != nil:
		// Render refuses what zklock would refuse, naming the
		// placeholder rather than the value.
		var pm protoreflect.Message
		if msg != nil {
			p, ok := msg.(proto.Message)
			if !ok {
				return nil, resourceStatus(m.name, fmt.Errorf("request of %s is a %T, not a proto.Message", m.name, msg))
			}
			pm = p.ProtoReflect()
		}
		var md metadata.MD
		for _, t := range cfg.templates {
			if t.meta && md == nil {
				md, _ = metadata.FromIncomingContext(ctx)
			}
			r, err := t.render(pm, md)
			if err != nil {
				return nil, resourceStatus(m.name, err)
			}
			rs = append(rs, r)
		}
		if len(rs) > 1 {
			slices.Sort(rs)
			rs = slices.Compact(rs)
		}
		return rs, nil
	case cfg.fn != nil:
		r, err := cfg.fn(ctx, m.name, msg)
		if err != nil {
			if _, ok := status.FromError(err); ok || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, resourceStatus(m.name, err)
			}
			return nil, resourceStatus(m.name, badRequest("resource function: %v", err))
		}
		if err := zklock.ValidateResource(r); err != nil {
			return nil, resourceStatus(m.name, err)
		}
		return append(rs, r), nil
	}
	// Without its leading "/": a resource name that starts with one is a
	// znode path, refused by zklock (RawPath says so).
	name := strings.TrimPrefix(m.name, "/")
	if err := zklock.ValidateResource(name); err != nil {
		return nil, resourceStatus(m.name, err)
	}
	return append(rs, name), nil
}

// newInput returns an empty message of the method's input type, from the
// global registry.
func (m *method) newInput() (proto.Message, error) {
	m.inputOnce.Do(func() {
		md, err := methodDescriptor(m.name)
		if err != nil {
			m.inputErr = fmt.Errorf("FromFirstMessage: %w", err)
			return
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			m.inputErr = fmt.Errorf("FromFirstMessage: input type of %s: %w", m.name, err)
			return
		}
		m.input = mt
	})
	if m.inputErr != nil {
		return nil, m.inputErr
	}
	return m.input.New().Interface(), nil
}

// methodDescriptor finds a method in the global proto registry, where
// generated code registers its services.
func methodDescriptor(fullMethod string) (protoreflect.MethodDescriptor, error) {
	svc, name, _ := splitFullMethod(fullMethod)
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, fmt.Errorf("service %s is not in the proto registry: %w", svc, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, fmt.Errorf("service %s has no method %s", svc, name)
	}
	return md, nil
}
