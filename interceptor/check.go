package interceptor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// check finds, at construction, what the options get wrong about the
// methods WithMethod names, when their descriptors are in the global proto
// registry (generated code registers its services when its package is
// initialised): a template that names a field the input message lacks,
// or one that is repeated or not a scalar, and a streaming method whose
// templates read fields without FromFirstMessage. What it cannot see (a
// WithMatcher, a service not registered) is found at the method's first
// call: Internal, logged once (see misconfigured).
func (o *options) check() error {
	names := make([]string, 0, len(o.exact))
	for name := range o.exact {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cfg := o.exact[name]
		if !slices.ContainsFunc(cfg.templates, func(t *template) bool { return t.fields }) {
			continue
		}
		md, err := methodDescriptor(name)
		if err != nil {
			continue
		}
		if (md.IsStreamingClient() || md.IsStreamingServer()) && !cfg.firstMessage {
			return fmt.Errorf("interceptor: WithMethod(%q): a template refers to request fields, but a stream's first message is read only with FromFirstMessage", name)
		}
		for _, t := range cfg.templates {
			if cp := t.compile(md.Input()); cp.err != nil {
				return fmt.Errorf("interceptor: WithMethod(%q): %w", name, cp.err)
			}
		}
	}
	return nil
}

// misconfigured counts a call refused with err, an Internal status: a
// misconfiguration that only a call could reveal. It logs it once per
// method.
func (in *interceptor) misconfigured(ctx context.Context, m *method, err error) {
	if status.Code(err) != codes.Internal {
		return
	}
	in.misconf.Add(ctx, m.name)
	if m.logged.Swap(true) {
		return
	}
	in.logger.LogAttrs(ctx, slog.LevelError,
		"zklock/interceptor: lock misconfigured: calls of this method are refused with Internal until it is fixed",
		slog.String("method", m.name), slog.String("error", status.Convert(err).Message()))
}
