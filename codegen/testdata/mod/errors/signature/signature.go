// Package signature holds marked functions and methods with signatures
// that cannot be wrapped.
package signature

import "context"

//zklock:resource=a
func NoParams() error { return nil }

//zklock:resource=a
func NoContext(id string) error { return nil }

//zklock:resource=a
func ContextSecond(id string, ctx context.Context) error { return nil }

//zklock:resource=a
func NoResults(ctx context.Context) {}

//zklock:resource=a
func NoError(ctx context.Context) int { return 0 }

//zklock:resource=a
func ErrorFirst(ctx context.Context) (error, int) { return nil, 0 }

//zklock:resource=a
func Neither(id string) {}

// Stack is generic.
type Stack[T any] struct{ items []T }

//zklock:resource=a
func (s *Stack[T]) Push(ctx context.Context, v T) error { return nil }

//zklock:resource=a
func Map[T any](ctx context.Context, v T) error { return nil }

//zklock:resource=a/{v}
func Undefined(ctx context.Context, v Missing) error { return nil }

// S has a method with a bad signature.
type S struct{}

//zklock:resource=a
func (S) Method(id string) error { return nil }
