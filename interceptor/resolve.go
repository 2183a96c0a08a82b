package interceptor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

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
}

// methods resolves and remembers which methods are locked, and how.
type methods struct {
	opts  *options
	cache sync.Map // full method name → *method
}

func (ms *methods) get(fullMethod string) *method {
	if v, ok := ms.cache.Load(fullMethod); ok {
		return v.(*method)
	}
	m := &method{name: fullMethod, cfg: ms.lookup(fullMethod)}
	v, _ := ms.cache.LoadOrStore(fullMethod, m)
	return v.(*method)
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

// resources computes the resources a call locks. msg is the request (the
// first message of a stream, or nil).
func (m *method) resources(ctx context.Context, msg any) ([]string, error) {
	cfg := m.cfg
	var rs []string
	switch {
	case cfg.fn != nil:
		r, err := cfg.fn(ctx, m.name, msg)
		if err != nil {
			if _, ok := status.FromError(err); ok || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, resourceStatus(err)
			}
			return nil, resourceStatus(badRequest("resource function: %v", err))
		}
		rs = []string{r}
	case cfg.templates != nil:
		var pm protoreflect.Message
		if msg != nil {
			p, ok := msg.(proto.Message)
			if !ok {
				return nil, resourceStatus(fmt.Errorf("request of %s is a %T, not a proto.Message", m.name, msg))
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
				return nil, resourceStatus(err)
			}
			rs = append(rs, r)
		}
		if len(rs) > 1 {
			slices.Sort(rs)
			rs = slices.Compact(rs)
		}
	default:
		// Without its leading "/": a resource name that starts with one
		// is a znode path, refused by zklock (RawPath says so).
		rs = []string{strings.TrimPrefix(m.name, "/")}
	}
	for _, r := range rs {
		if err := zklock.ValidateResource(r); err != nil {
			return nil, resourceStatus(err)
		}
	}
	return rs, nil
}

// newInput returns an empty message of the method's input type, from the
// global registry.
func (m *method) newInput() (proto.Message, error) {
	m.inputOnce.Do(func() {
		svc, name, _ := splitFullMethod(m.name)
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		if err != nil {
			m.inputErr = fmt.Errorf("FromFirstMessage: service %s is not in the proto registry: %w", svc, err)
			return
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			m.inputErr = fmt.Errorf("FromFirstMessage: %s is not a service", svc)
			return
		}
		md := sd.Methods().ByName(protoreflect.Name(name))
		if md == nil {
			m.inputErr = fmt.Errorf("FromFirstMessage: service %s has no method %s", svc, name)
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
