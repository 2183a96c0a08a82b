package interceptor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/zklockkit/zklockkit/internal/restmpl"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A template is a resource template of zklockkit's one language
// (internal/restmpl) whose placeholders are a dotted path of proto field
// names ({transfer.from}) or an incoming metadata key
// ({metadata:x-tenant-id}).
type template struct {
	src    string
	t      *restmpl.Template
	parts  []part // one per placeholder
	fields bool   // refers to request fields
	meta   bool   // refers to metadata

	compiled sync.Map // protoreflect.MessageDescriptor → *compiledPaths
}

type part struct {
	path []protoreflect.Name // a field placeholder
	key  string              // a metadata placeholder
}

type compiledPaths struct {
	paths [][]protoreflect.FieldDescriptor // one per field placeholder
	err   error
}

// metaSource is the placeholder source of incoming metadata:
// {metadata:x-tenant-id}.
const metaSource = "metadata"

// errBadRequest marks errors caused by the request (InvalidArgument);
// other template errors are configuration errors (Internal).
var errBadRequest = errors.New("bad request")

type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func (e *requestError) Is(target error) bool { return target == errBadRequest }

func badRequest(format string, a ...any) error { return &requestError{fmt.Sprintf(format, a...)} }

func parseTemplate(s string) (*template, error) {
	rt, err := restmpl.Parse(s, metaSource)
	if err != nil {
		return nil, err
	}
	t := &template{src: s, t: rt}
	for _, p := range rt.Placeholders() {
		if p.Source == metaSource {
			if !validMetadataKey(p.Name) {
				return nil, fmt.Errorf("resource template %q: invalid metadata key %q in %s (want lower case letters, digits, '-', '_' or '.')", s, p.Name, p)
			}
			t.parts = append(t.parts, part{key: p.Name})
			t.meta = true
			continue
		}
		var path []protoreflect.Name
		for seg := range strings.SplitSeq(p.Name, ".") {
			if !protoreflect.Name(seg).IsValid() {
				return nil, fmt.Errorf("resource template %q: invalid field path %s (want proto field names, dotted through messages)", s, p)
			}
			path = append(path, protoreflect.Name(seg))
		}
		t.parts = append(t.parts, part{path: path})
		t.fields = true
	}
	return t, nil
}

func validMetadataKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// compile resolves the template's field paths against a message type once.
func (t *template) compile(md protoreflect.MessageDescriptor) *compiledPaths {
	if v, ok := t.compiled.Load(md); ok {
		return v.(*compiledPaths)
	}
	cp := &compiledPaths{}
	for _, p := range t.parts {
		if p.path == nil {
			continue
		}
		fds, err := resolvePath(md, p.path)
		if err != nil {
			cp.err = fmt.Errorf("resource template %q: %w", t.src, err)
			break
		}
		cp.paths = append(cp.paths, fds)
	}
	v, _ := t.compiled.LoadOrStore(md, cp)
	return v.(*compiledPaths)
}

func resolvePath(md protoreflect.MessageDescriptor, path []protoreflect.Name) ([]protoreflect.FieldDescriptor, error) {
	fds := make([]protoreflect.FieldDescriptor, 0, len(path))
	cur := md
	for i, name := range path {
		fd := cur.Fields().ByName(name)
		if fd == nil {
			return nil, fmt.Errorf("message %s has no field %q", cur.FullName(), name)
		}
		if fd.IsList() || fd.IsMap() {
			return nil, fmt.Errorf("field %s is repeated", fd.FullName())
		}
		last := i == len(path)-1
		if !last {
			if fd.Message() == nil {
				return nil, fmt.Errorf("field %s is not a message", fd.FullName())
			}
			cur = fd.Message()
		} else if !formattable(fd.Kind()) {
			return nil, fmt.Errorf("field %s has kind %s; want a string, integer, bool or enum", fd.FullName(), fd.Kind())
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

func formattable(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind, protoreflect.BoolKind, protoreflect.EnumKind,
		protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}

// render fills the template from msg (nil when the call has no message to
// read) and md. Errors matching errBadRequest or zklock.ErrInvalidResource
// come from the request.
func (t *template) render(msg protoreflect.Message, md metadata.MD) (string, error) {
	if s, ok := t.t.Literal(); ok {
		return s, nil
	}
	var cp *compiledPaths
	if t.fields {
		if msg == nil {
			return "", fmt.Errorf("resource template %q refers to request fields, but the stream's first message is not read (use FromFirstMessage)", t.src)
		}
		cp = t.compile(msg.Descriptor())
		if cp.err != nil {
			return "", cp.err
		}
	}
	// Values are computed first, so that a field that is not set is told
	// apart from an empty one.
	var buf [4]string // most templates have fewer placeholders: no allocation
	vals := buf[:0]
	if len(t.parts) > len(buf) {
		vals = make([]string, 0, len(t.parts))
	}
	vals = vals[:len(t.parts)]
	fi := 0
	for i, p := range t.parts {
		if p.path == nil {
			if vs := md.Get(p.key); len(vs) > 0 {
				vals[i] = vs[0]
			}
			continue
		}
		v, err := fieldValue(msg, cp.paths[fi])
		fi++
		if err != nil {
			return "", err
		}
		vals[i] = v
	}
	return t.t.Render(func(i int) string { return vals[i] })
}

func fieldValue(msg protoreflect.Message, path []protoreflect.FieldDescriptor) (string, error) {
	m := msg
	for _, fd := range path[:len(path)-1] {
		if !m.Has(fd) {
			return "", badRequest("field %s is not set", pathName(path))
		}
		m = m.Get(fd).Message()
	}
	fd := path[len(path)-1]
	if fd.HasPresence() && !m.Has(fd) {
		return "", badRequest("field %s is not set", pathName(path))
	}
	v := m.Get(fd)
	switch fd.Kind() {
	case protoreflect.StringKind:
		return v.String(), nil
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool()), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return strconv.FormatInt(int64(v.Enum()), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10), nil
	default:
		return strconv.FormatInt(v.Int(), 10), nil
	}
}

func pathName(path []protoreflect.FieldDescriptor) string {
	names := make([]string, len(path))
	for i, fd := range path {
		names[i] = string(fd.Name())
	}
	return strings.Join(names, ".")
}
