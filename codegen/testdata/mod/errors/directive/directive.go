// Package directive holds malformed directives.
package directive

import "context"

//zklock:resource=a mode=shared
func BadMode(ctx context.Context) error { return nil }

//zklock:resource=a mode=read mode=write
func DupMode(ctx context.Context) error { return nil }

//zklock:resource=a wait=5
func BadWait(ctx context.Context) error { return nil }

//zklock:resource=a wait=-1s
func NegativeWait(ctx context.Context) error { return nil }

//zklock:resource=a wait=
func EmptyWait(ctx context.Context) error { return nil }

//zklock:resource=a wait=1s
//zklock:wait=2s
func DupWaitOverLines(ctx context.Context) error { return nil }

//zklock:resource=a try try
func DupTry(ctx context.Context) error { return nil }

//zklock:resource=a try=yes
func TryWithValue(ctx context.Context) error { return nil }

//zklock:resource=a try wait=1s
func TryAndWait(ctx context.Context) error { return nil }

//zklock:resource=a lock=b
func UnknownOption(ctx context.Context) error { return nil }

//zklock:resource=a exclusive
func BareWord(ctx context.Context) error { return nil }

//zklock:resource
func ResourceWithoutValue(ctx context.Context) error { return nil }

//zklock:resource=
func EmptyTemplate(ctx context.Context) error { return nil }

//zklock:resource=a/{id
func UnterminatedPlaceholder(ctx context.Context, id string) error { return nil }

//zklock:resource=a/}
func StrayBrace(ctx context.Context) error { return nil }

//zklock:resource=a/{}
func EmptyPlaceholder(ctx context.Context) error { return nil }

//zklock:resource=a/{1id}
func BadPlaceholder(ctx context.Context) error { return nil }

//zklock:resource=a/{id.}
func TrailingDot(ctx context.Context, id string) error { return nil }

//zklock:resource="a/{id}
func UnterminatedQuote(ctx context.Context, id string) error { return nil }

//zklock:resource="a	b"
func ControlCharacter(ctx context.Context) error { return nil }

//zklock:resource=a/{id} resource=a/{id}
func DupResource(ctx context.Context, id string) error { return nil }

//zklock:mode=read
func NoResource(ctx context.Context) error { return nil }

//zklock:resource=a wait=250
func BareMilliseconds(ctx context.Context) error { return nil }

//zklock:resource=a wait=5sec
func MisspelledUnit(ctx context.Context) error { return nil }

//zklock:resource=a wait=1m30
func CompoundWithoutUnit(ctx context.Context) error { return nil }

//zklock:resource=a wait=soon
func NotADuration(ctx context.Context) error { return nil }
