package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/zklockkit/zklockkit/internal/restmpl"
	"github.com/zklockkit/zklockkit/zklock"
)

// Sources a template may name in a placeholder: {param:id} (or just {id}),
// {query:id}, {header:X-Tenant}, {cookie:session}.
const (
	srcParam  = "param"
	srcQuery  = "query"
	srcHeader = "header"
	srcCookie = "cookie"
)

var sources = []string{srcParam, srcQuery, srcHeader, srcCookie}

// template is a parsed resource template with its placeholders bound to
// the parts of a request they read.
type template struct {
	t     *restmpl.Template
	binds []binding
	query bool // some placeholder reads the query string
}

type binding struct {
	src  string // srcParam, srcQuery, srcHeader or srcCookie
	name string // canonical for headers
}

func parseTemplate(s string) (*template, error) {
	t, err := restmpl.Parse(s, sources...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	bt := &template{t: t}
	for _, p := range t.Placeholders() {
		b := binding{src: p.Source, name: p.Name}
		switch b.src {
		case "":
			b.src = srcParam
		case srcHeader:
			b.name = http.CanonicalHeaderKey(p.Name)
		case srcQuery:
			bt.query = true
		}
		bt.binds = append(bt.binds, b)
	}
	return bt, nil
}

// params returns the route parameters the template reads.
func (t *template) params() []string {
	var ps []string
	for _, b := range t.binds {
		if b.src == srcParam {
			ps = append(ps, b.name)
		}
	}
	return ps
}

// render fills the template in from r and the route's parameters.
func (t *template) render(r *http.Request, param func(string) string) (string, error) {
	if s, ok := t.t.Literal(); ok {
		return s, nil
	}
	var q url.Values
	if t.query {
		q = r.URL.Query()
	}
	return t.t.Render(func(i int) string {
		b := t.binds[i]
		switch b.src {
		case srcParam:
			if param == nil {
				return ""
			}
			return param(b.name)
		case srcQuery:
			return q.Get(b.name)
		case srcHeader:
			return r.Header.Get(b.name)
		}
		if c, err := r.Cookie(b.name); err == nil {
			return c.Value
		}
		return ""
	})
}

// rule is a compiled Rule.
type rule struct {
	src   Rule
	tmpls []*template // none: the route's own path, or the adapter's function
	mode  ruleMode
	// acquire options for each zklock mode the rule may use, built once
	opts [3][]zklock.AcquireOption // by zklock.Exclusive, Read, Write
	// route, when known at compile time: the default template and the
	// check of the templates' parameters against the route's
	route *routeInfo
	// timingDesc, when set, is what the Server-Timing header shows instead
	// of the resource: the templates, when one reads a header or a cookie
	// (the header is readable by the page's scripts, an HttpOnly cookie
	// must not be)
	timingDesc string
}

// routeInfo is what a route pattern says: its parameters and the default
// template (the pattern itself, parameters filled in).
type routeInfo struct {
	params []string
	def    *template
	err    error // a template names a parameter the route lacks
	// the template and the parameter of err, for the log
	template, param string
	logged          atomic.Bool // err was logged
}

// compileRule checks r and builds its acquire options over base.
func compileRule(r Rule, base []zklock.AcquireOption) (*rule, error) {
	switch {
	case r.Mode != zklock.Exclusive && r.Mode != zklock.Read && r.Mode != zklock.Write:
		return nil, fmt.Errorf("%w: mode %v: a route locks Exclusive, Read or Write (a semaphore with Limit)", ErrInvalidConfig, r.Mode)
	case r.ReadWrite && r.Mode != zklock.Exclusive:
		return nil, fmt.Errorf("%w: ReadWrite picks the mode by method: leave Mode unset", ErrInvalidConfig)
	case r.MaxWait < 0:
		return nil, fmt.Errorf("%w: %w: negative MaxWait %v", ErrInvalidConfig, zklock.ErrInvalidOption, r.MaxWait)
	case r.Try && r.MaxWait > 0:
		return nil, fmt.Errorf("%w: %w: Try and MaxWait exclude each other", ErrInvalidConfig, zklock.ErrInvalidOption)
	case r.Limit < 0:
		return nil, fmt.Errorf("%w: %w: negative Limit %d", ErrInvalidConfig, zklock.ErrInvalidOption, r.Limit)
	case r.Limit > 0 && (r.Mode != zklock.Exclusive || r.ReadWrite):
		return nil, fmt.Errorf("%w: %w: a Limit (semaphore) has no Mode: leave Mode and ReadWrite unset", ErrInvalidConfig, zklock.ErrInvalidOption)
	case r.Resource != "" && len(r.Resources) > 0:
		return nil, fmt.Errorf("%w: Resource and Resources exclude each other", ErrInvalidConfig)
	case r.Resources != nil && len(r.Resources) == 0:
		return nil, fmt.Errorf("%w: Resource: no template given", ErrInvalidConfig)
	}
	cr := &rule{src: r, mode: ruleMode{mode: r.Mode, readWrite: r.ReadWrite}}
	srcs := r.Resources
	if r.Resource != "" {
		srcs = []string{r.Resource}
	}
	for i, s := range srcs {
		if slices.Contains(srcs[:i], s) {
			return nil, fmt.Errorf("%w: resource template %q is listed twice", ErrInvalidConfig, s)
		}
		t, err := parseTemplate(s)
		if err != nil {
			return nil, err
		}
		cr.tmpls = append(cr.tmpls, t)
		if slices.ContainsFunc(t.binds, func(b binding) bool { return b.src == srcHeader || b.src == srcCookie }) {
			cr.timingDesc = strings.Join(srcs, ",")
		}
	}
	// The user's options first, so that the rule's own override them only
	// where the rule says something.
	for _, m := range []zklock.Mode{zklock.Exclusive, zklock.Read, zklock.Write} {
		opts := slices.Clip(slices.Clone(base))
		switch {
		case r.Limit > 0:
			opts = append(opts, zklock.Limit(r.Limit))
		case m != zklock.Exclusive || r.Mode != zklock.Exclusive || r.ReadWrite:
			opts = append(opts, m)
		}
		if r.Try {
			opts = append(opts, zklock.Try())
		}
		if r.MaxWait > 0 {
			opts = append(opts, zklock.MaxWait(r.MaxWait))
		}
		cr.opts[m] = opts
	}
	return cr, nil
}

// bindRoute checks the rule's templates against the route of pattern and
// computes the default template.
func (r *rule) bindRoute(parse PatternParser, pattern string) *routeInfo {
	ri := &routeInfo{}
	params, def, err := parse(pattern)
	if err != nil {
		ri.err = fmt.Errorf("%w: route %q: %w", ErrInvalidConfig, pattern, err)
		return ri
	}
	ri.params = params
	for _, t := range r.tmpls {
		for _, p := range t.params() {
			if !slices.Contains(params, p) {
				ri.err = fmt.Errorf("%w: resource template %q: route %q has no parameter %q", ErrInvalidConfig, t.t, pattern, p)
				ri.template, ri.param = t.t.String(), p
				return ri
			}
		}
	}
	if len(r.tmpls) == 0 {
		if def == "" {
			def = "/"
		}
		ri.def, ri.err = parseTemplate(def)
	}
	return ri
}

// resources computes the request's resources, appended to rs: distinct,
// sorted when more than one.
func (r *rule) resources(req *http.Request, ri *routeInfo, m Match, rs []string) ([]string, error) {
	switch {
	case len(r.tmpls) == 1:
		s, err := r.tmpls[0].render(req, m.Param)
		return append(rs, s), err
	case len(r.tmpls) > 1:
		for _, t := range r.tmpls {
			s, err := t.render(req, m.Param)
			if err != nil {
				return nil, err
			}
			rs = append(rs, s)
		}
		// Two templates may name one resource (a transfer from an account
		// to itself): it is locked once.
		slices.Sort(rs)
		return slices.Compact(rs), nil
	case m.Func != nil:
		s, err := m.Func()
		return append(rs, s), err
	case ri != nil && ri.def != nil:
		s, err := ri.def.render(req, m.Param)
		return append(rs, s), err
	}
	// No route pattern known: the request's path.
	p := req.URL.Path
	if len(p) > 1 && p[0] == '/' {
		p = p[1:]
	}
	return append(rs, p), nil
}

// hideValues returns err, an acquire's error, with a name zklock refused
// replaced by the template it came from, so that the answer does not
// send the request's values back: a value may be a secret (a cookie, a
// header). Rendering already refuses the values zklock would, so this is
// for the rules of a raw path (zklock.RawPath), which zklock checks
// further.
func (r *rule) hideValues(err error, ri *routeInfo, m Match) error {
	re, ok := errors.AsType[*zklock.ResourceError](err)
	if !ok {
		return err
	}
	var srcs []string
	switch {
	case len(r.tmpls) > 0:
		for _, t := range r.tmpls {
			srcs = append(srcs, t.t.String())
		}
	case m.Func == nil && ri != nil && ri.def != nil:
		srcs = append(srcs, ri.def.t.String())
	default:
		return err // a ResourceFunc's name, or the request's path
	}
	return &zklock.ResourceError{Resource: strings.Join(srcs, ","), Reason: re.Reason}
}

// resourceList joins resources for display (Server-Timing, LockError).
func resourceList(rs []string) string {
	if len(rs) == 1 {
		return rs[0]
	}
	return strings.Join(rs, ",")
}
