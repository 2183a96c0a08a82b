package codegen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/types"
	"strconv"
	"strings"
)

// emit writes the generated file of a plan, gofmt'd.
func emit(pl *plan) ([]byte, error) {
	var generated []string
	for _, w := range pl.types {
		generated = append(generated, w.wrap, w.ctor)
	}
	for _, f := range pl.funcs {
		generated = append(generated, f.gen)
	}
	im := newImportSet(pl.pkg.Types, generated)
	e := &emitter{im: im, zk: im.name(zklockPath, "zklock")}
	for _, t := range pl.all() {
		if t.dir.wait > 0 && e.time == "" {
			e.time = im.name("time", "time")
		}
		for _, segs := range t.resources {
			for _, s := range segs {
				if s.param >= 0 && s.fmtRule >= fmtItoa && e.strconv == "" {
					e.strconv = im.name("strconv", "strconv")
				}
				if s.param >= 0 && e.value == "" {
					e.value = fresh("zklockValue", im.taken)
					im.taken[e.value] = true
				}
			}
		}
		if len(t.resources) > 1 && e.distinct == "" {
			e.distinct = fresh("zklockDistinct", im.taken)
			im.taken[e.distinct] = true
		}
	}
	if e.value != "" {
		e.strings = im.name("strings", "strings")
	}
	if e.distinct != "" {
		e.slices = im.name("slices", "slices")
	}
	v := fileView{Header: Header, Package: pl.pkg.Types.Name()}
	for _, w := range pl.types {
		v.Wrappers = append(v.Wrappers, e.wrapper(w))
	}
	for _, f := range pl.funcs {
		v.Funcs = append(v.Funcs, e.function(f))
	}
	v.Imports = im.specs()
	v.Helpers = e.helpers()
	var buf bytes.Buffer
	if err := fileTemplate.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("codegen: %s: %w", pl.pkg.PkgPath, err)
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("codegen: %s: formatting the generated code: %w\n%s", pl.pkg.PkgPath, err, buf.Bytes())
	}
	return src, nil
}

func (pl *plan) all() []*target {
	var ts []*target
	for _, w := range pl.types {
		ts = append(ts, w.methods...)
	}
	return append(ts, pl.funcs...)
}

// emitter holds the names of one generated file's imports and helpers.
type emitter struct {
	im       *importSet
	zk       string // zklock's name in the file
	time     string
	strconv  string
	strings  string
	slices   string
	value    string // the helper that escapes a placeholder's value
	distinct string // the helper that sorts resources and drops duplicates
}

// helpers returns the source of the file's helper functions.
func (e *emitter) helpers() string {
	var b strings.Builder
	if e.value != "" {
		fmt.Fprintf(&b, `
// %[1]s returns a placeholder's value as it goes into a resource name,
// escaped as every zklockkit front end escapes it: "%%" as %%25 and "/" as
// %%2F, so that distinct values name distinct resources. An empty value is
// an error matching zklock.ErrInvalidResource.
func %[1]s(template, placeholder, v string) (string, error) {
	if v == "" {
		return "", &%[2]s.ResourceError{Resource: template, Reason: "empty value for " + placeholder}
	}
	if !%[3]s.ContainsAny(v, "%%/") {
		return v, nil
	}
	var b %[3]s.Builder
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '%%':
			b.WriteString("%%25")
		case '/':
			b.WriteString("%%2F")
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String(), nil
}
`, e.value, e.zk, e.strings)
	}
	if e.distinct != "" {
		fmt.Fprintf(&b, `
// %[1]s returns the resources sorted, each once: templates that name the
// same resource for a call lock it once.
func %[1]s(resources ...string) []string {
	%[2]s.Sort(resources)
	return %[2]s.Compact(resources)
}
`, e.distinct, e.slices)
	}
	return b.String()
}

func (e *emitter) wrapper(w *wrapper) wrapperView {
	var names []string
	for _, m := range w.methods {
		names = append(names, m.name)
	}
	ms := "method " + list(names) + " acquires the resources named by its zklock directive, calls the method of *" +
		w.name + " with the lease's context and releases"
	if len(names) > 1 {
		ms = "methods " + list(names) + " acquire the resources named by their zklock directives, call the methods of *" +
			w.name + " with the lease's context and release"
	}
	v := wrapperView{
		Name:   w.wrap,
		Type:   w.name,
		Field:  w.field,
		Locker: e.zk + ".Locker",
		Ctor:   w.ctor,
		Panic:  "zklock: " + w.ctor + ": nil argument",
		Doc: wrap(fmt.Sprintf("%s is *%s with locks: its %s. "+
			"Its other methods are those of *%s, so %s and *%s satisfy every interface that *%s satisfies.",
			w.wrap, w.name, ms, w.name, w.wrap, w.wrap, w.name)),
		CtorDoc: wrap(fmt.Sprintf("%s returns a %s that calls inner, locking through locker. "+
			"It panics if either is nil.", w.ctor, w.wrap)),
	}
	for _, m := range w.methods {
		v.Methods = append(v.Methods, e.function(m))
	}
	return v
}

// function renders one wrapped method or function variant.
func (e *emitter) function(t *target) funcView {
	sig := t.sig
	q := e.im.qualifier
	// Parameter names: the declared ones, unless they are blank or would
	// hide a name the body uses.
	reserved := map[string]bool{e.zk: true}
	for _, n := range []string{e.time, e.strconv, e.strings, e.slices, e.value, e.distinct} {
		if n != "" {
			reserved[n] = true
		}
	}
	for _, n := range universeUsed {
		reserved[n] = true
	}
	if t.recv == nil {
		reserved[t.name] = true // the body calls it
	}
	taken := map[string]bool{}
	for k := range reserved {
		taken[k] = true
	}
	params := sig.Params()
	names := make([]string, params.Len())
	for i := range params.Len() {
		n := params.At(i).Name()
		if n == "" || n == "_" {
			n = "p" + strconv.Itoa(i)
			if i == 0 {
				n = "ctx"
			}
		}
		names[i] = fresh(n, taken)
		taken[names[i]] = true
	}
	results := sig.Results()
	rnames := make([]string, results.Len())
	for i := range results.Len() {
		n := "r" + strconv.Itoa(i)
		if i == results.Len()-1 {
			n = "err"
		}
		rnames[i] = fresh(n, taken)
		taken[rnames[i]] = true
	}
	v := funcView{
		Name:    t.gen,
		Ctx:     names[0],
		Lease:   fresh("lease", taken),
		Err:     rnames[len(rnames)-1],
		Returns: strings.Join(rnames, ", "),
		Opts:    t.dir.options(e.zk, e.time),
	}
	taken[v.Lease] = true
	var ps []string
	var pre []string
	if t.recv != nil {
		rv := fresh("w", taken)
		v.Recv = "(" + rv + " " + t.recv.wrap + ") "
		v.Locker = rv + "." + t.recv.field
		v.Inner = rv + "." + t.recv.name + "." + t.name
	} else {
		lk := fresh("locker", taken)
		pre = []string{lk + " " + e.zk + ".Locker"}
		v.Locker = lk
		v.Inner = t.name
	}
	for i := range params.Len() {
		typ := types.TypeString(params.At(i).Type(), q)
		arg := names[i]
		if sig.Variadic() && i == params.Len()-1 {
			typ = "..." + types.TypeString(params.At(i).Type().(*types.Slice).Elem(), q)
			arg += "..."
		}
		ps = append(ps, names[i]+" "+typ)
		if i == 0 {
			ps = append(ps, pre...)
		} else {
			v.Args = append(v.Args, arg)
		}
	}
	v.Params = strings.Join(ps, ", ")
	var rs []string
	for i := range results.Len() {
		rs = append(rs, rnames[i]+" "+types.TypeString(results.At(i).Type(), q))
	}
	v.Results = strings.Join(rs, ", ")

	var exprs, quoted []string
	for i, segs := range t.resources {
		exprs = append(exprs, e.resource(&v, segs, names, t.dir.resources[i], taken))
		quoted = append(quoted, strconv.Quote(t.dir.resources[i].text))
	}
	if len(exprs) == 1 {
		v.Acquire, v.Resource = "Acquire", exprs[0]
	} else {
		v.Acquire, v.Resource = "AcquireAll", e.distinct+"("+strings.Join(exprs, ", ")+")"
	}

	what := quoted[0]
	if len(quoted) > 1 {
		what = list(quoted) + ", all or nothing"
	}
	var extra []string
	for _, o := range t.dir.text {
		if !strings.HasPrefix(o, "resource=") {
			extra = append(extra, o)
		}
	}
	if len(extra) > 0 {
		what += " (" + strings.Join(extra, " ") + ")"
	}
	if t.recv == nil {
		what += " through " + v.Locker
	}
	inner := t.name
	if t.recv != nil {
		inner = t.recv.name + "." + t.name
	}
	doc := fmt.Sprintf("%s acquires %s, calls %s with the lease's context and releases. "+
		"If the call succeeds but the lock was lost meanwhile, it returns the loss (zklock.ErrLeaseLost).",
		t.gen, what, inner)
	v.Doc = wrap(doc)
	return v
}

// resource renders a template as a Go string expression over variables
// that hold its placeholders' escaped values, added to v.Values.
func (e *emitter) resource(v *funcView, segs []segment, names []string, tm *template, taken map[string]bool) string {
	var parts []string
	ph := 0
	for _, s := range segs {
		if s.param < 0 {
			parts = append(parts, strconv.Quote(s.lit))
			continue
		}
		for tm.parts[ph].path == nil {
			ph++
		}
		placeholder := tm.parts[ph].String()
		ph++
		x := strings.Join(append([]string{names[s.param]}, s.fields...), ".")
		switch s.fmtRule {
		case fmtConvert:
			x = "string(" + x + ")"
		case fmtStringer:
			x += ".String()"
		case fmtItoa:
			x = e.strconv + ".Itoa(" + x + ")"
		case fmtInt64:
			x = e.strconv + ".FormatInt(" + x + ", 10)"
		case fmtInt:
			x = e.strconv + ".FormatInt(int64(" + x + "), 10)"
		case fmtUint64:
			x = e.strconv + ".FormatUint(" + x + ", 10)"
		case fmtUint:
			x = e.strconv + ".FormatUint(uint64(" + x + "), 10)"
		}
		name := fresh("k"+strconv.Itoa(len(v.Values)), taken)
		taken[name] = true
		v.Values = append(v.Values, valueView{Var: name, Func: e.value,
			Template: strconv.Quote(tm.text), Placeholder: strconv.Quote(placeholder), Expr: x})
		parts = append(parts, name)
	}
	return strings.Join(parts, " + ")
}

// list joins words as "a", "a and b", "a, b and c".
func list(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// wrap breaks text into comment lines of at most 76 bytes where it can.
func wrap(text string) []string {
	var lines []string
	var line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > 76 {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}
