package codegen

import "go/types"

// formatRule says how a placeholder's value becomes text.
type formatRule int

const (
	fmtString   formatRule = iota // a string, used as is
	fmtConvert                    // a named string type: string(x)
	fmtStringer                   // x.String()
	fmtItoa                       // int: strconv.Itoa(x)
	fmtInt64                      // int64: strconv.FormatInt(x, 10)
	fmtInt                        // other signed integers: strconv.FormatInt(int64(x), 10)
	fmtUint64                     // uint64: strconv.FormatUint(x, 10)
	fmtUint                       // other unsigned integers: strconv.FormatUint(uint64(x), 10)
)

// formatOf returns the documented formatting rule for a placeholder's
// type: a String() string method first (as package fmt does), then
// strings as they are and integers in decimal.
func (c *checker) formatOf(typ types.Type) (formatRule, bool) {
	if typ == nil || typ == types.Typ[types.Invalid] {
		return 0, false
	}
	if m, _, _ := types.LookupFieldOrMethod(typ, true, c.p.Types, "String"); m != nil {
		if fn, ok := m.(*types.Func); ok {
			s := fn.Type().(*types.Signature)
			if s.Params().Len() == 0 && s.Results().Len() == 1 && types.Identical(s.Results().At(0).Type(), types.Typ[types.String]) {
				return fmtStringer, true
			}
		}
	}
	b, ok := typ.Underlying().(*types.Basic)
	if !ok {
		return 0, false
	}
	_, named := types.Unalias(typ).(*types.Named)
	info := b.Info()
	switch {
	case info&types.IsString != 0 && !named:
		return fmtString, true
	case info&types.IsString != 0:
		return fmtConvert, true
	case info&types.IsInteger == 0:
		return 0, false
	case b.Kind() == types.Int && !named:
		return fmtItoa, true
	case b.Kind() == types.Int64 && !named:
		return fmtInt64, true
	case b.Kind() == types.Uint64 && !named:
		return fmtUint64, true
	case info&types.IsUnsigned != 0:
		return fmtUint, true
	}
	return fmtInt, true
}
