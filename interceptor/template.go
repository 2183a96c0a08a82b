package interceptor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A template is literal text with {placeholders}: a dotted path of proto
// field names ({transfer.from}) or an incoming metadata key
// ({metadata:x-tenant-id}).
type template struct {
	src    string
	parts  []part
	fields bool // refers to request fields
	meta   bool // refers to metadata

	compiled sync.Map // protoreflect.MessageDescriptor → *compiledPaths
}

type part struct {
	lit  string
	path []protoreflect.Name // a field placeholder
	key  string              // a metadata placeholder
}

type compiledPaths struct {
	paths [][]protoreflect.FieldDescriptor // one per field placeholder
	err   error
}

const metaPrefix = "metadata:"

// errBadRequest marks errors caused by the request (InvalidArgument);
// other template errors are configuration errors (Internal).
var errBadRequest = errors.New("bad request")

type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func (e *requestError) Is(target error) bool { return target == errBadRequest }

func badRequest(format string, a ...any) error { return &requestError{fmt.Sprintf(format, a...)} }

func parseTemplate(s string) (*template, error) {
	t := &template{src: s}
	bad := func(why string) (*template, error) {
		return nil, fmt.Errorf("resource template %q: %s", s, why)
	}
	rest := s
	prevPlaceholder := false
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			t.parts = append(t.parts, part{lit: rest})
			break
		}
		if rest[open] == '}' {
			return bad("'}' without '{'")
		}
		if open > 0 {
			t.parts = append(t.parts, part{lit: rest[:open]})
			if strings.Contains(rest[:open], "/") {
				prevPlaceholder = false
			}
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] != '}' {
			return bad("unclosed '{'")
		}
		name := rest[open+1 : open+1+end]
		rest = rest[open+1+end+1:]
		if prevPlaceholder {
			return bad("placeholders must be separated by text containing '/'")
		}
		prevPlaceholder = true
		if key, ok := strings.CutPrefix(name, metaPrefix); ok {
			if !validMetadataKey(key) {
				return bad(fmt.Sprintf("invalid metadata key %q", key))
			}
			t.parts = append(t.parts, part{key: key})
			t.meta = true
			continue
		}
		var path []protoreflect.Name
		for seg := range strings.SplitSeq(name, ".") {
			if !protoreflect.Name(seg).IsValid() {
				return bad(fmt.Sprintf("invalid field path %q", name))
			}
			path = append(path, protoreflect.Name(seg))
		}
		t.parts = append(t.parts, part{path: path})
		t.fields = true
	}
	if len(t.parts) == 0 {
		return bad("empty")
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
// read) and md. Errors matching errBadRequest come from the request.
func (t *template) render(msg protoreflect.Message, md metadata.MD) (string, error) {
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
	var b strings.Builder
	b.Grow(len(t.src) + 16)
	fi := 0
	for _, p := range t.parts {
		switch {
		case p.path != nil:
			v, err := fieldValue(msg, cp.paths[fi])
			fi++
			if err != nil {
				return "", err
			}
			writeEscaped(&b, v)
		case p.key != "":
			vs := md.Get(p.key)
			if len(vs) == 0 || vs[0] == "" {
				return "", badRequest("metadata %q is missing or empty", p.key)
			}
			writeEscaped(&b, vs[0])
		default:
			b.WriteString(p.lit)
		}
	}
	return b.String(), nil
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
		if v.String() == "" {
			return "", badRequest("field %s is empty", pathName(path))
		}
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

// writeEscaped writes a placeholder's value with '%' and '/' percent-encoded.
// Since placeholders are separated by text containing '/', a value cannot
// imitate the template's separators: for a given template, distinct values
// give distinct resources.
func writeEscaped(b *strings.Builder, v string) {
	if !strings.ContainsAny(v, "%/") {
		b.WriteString(v)
		return
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2F")
		default:
			b.WriteByte(v[i])
		}
	}
}
