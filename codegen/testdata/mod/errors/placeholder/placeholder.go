// Package placeholder holds placeholders that cannot be resolved or
// formatted.
package placeholder

import (
	"context"

	"example.com/zkgen/other"
)

// Transfer is a placeholder root.
type Transfer struct {
	From   string
	Amount float64
	Tags   []string
	Inner  *Inner
	Ok     bool
}

// Inner is reached through a pointer.
type Inner struct{ Name string }

// Label is a method, not a field.
func (Transfer) Label() string { return "" }

//zklock:resource=a/{idx}
func UnknownParam(ctx context.Context, id string) error { return nil }

//zklock:resource=a/{t.Form}
func UnknownField(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t.Inner.Nme}
func UnknownNestedField(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t.Label}
func MethodNotField(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t.Amount}
func Float(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t.Tags}
func Slice(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t}
func Struct(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t.Ok}
func Bool(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{t.Inner}
func Pointer(ctx context.Context, t Transfer) error { return nil }

//zklock:resource=a/{ctx}
func Context(ctx context.Context) error { return nil }

//zklock:resource=a/{_}
func Blank(ctx context.Context, _ string) error { return nil }

//zklock:resource=a/{th.secret}
func Unexported(ctx context.Context, th other.Thing) error { return nil }

//zklock:resource=a/{id.Len}
func FieldOfString(ctx context.Context, id string) error { return nil }

//zklock:resource=a/{ids}
func Variadic(ctx context.Context, ids ...string) error { return nil }

//zklock:resource=a/{m}
func Map(ctx context.Context, m map[string]int) error { return nil }

//zklock:resource=a/{ok}/{t.Form} resource=b/{f}
func Several(ctx context.Context, t Transfer, f float32) error { return nil }
