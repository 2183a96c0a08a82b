package crossadapter

//go:generate go run github.com/zklockkit/zklockkit/codegen/cmd/zklockgen

import (
	"context"

	"github.com/zklockkit/zklockkit/zklock"
)

// Touch reports, through path, the znode of the lease it runs under.
//
//zklock:resource=accounts/{id}
func Touch(ctx context.Context, id string, path *string) error {
	*path = zklock.LeaseFromContext(ctx).Path()
	return nil
}

// TryTouch is Touch with a try: it fails at once when the lock is busy.
//
//zklock:resource=accounts/{id} try
func TryTouch(ctx context.Context, id string, path *string) error {
	return Touch(ctx, id, path)
}

// TouchPath is Touch under a template that starts with "/": a resource
// name that looks like a znode path, which every front end refuses with
// the core's error (a znode path is locked with zklock.RawPath).
//
//zklock:resource=/locks/{id}
func TouchPath(ctx context.Context, id string, path *string) error {
	return Touch(ctx, id, path)
}
