package tracing

import "github.com/zklockkit/zklockkit/zklock"

// DefaultResourceClass is the default resource class (WithResourceClass):
// zklock.ResourceClass, the resource name with every segment that looks
// like an identifier replaced by "{id}" ("accounts/42" → "accounts/{id}").
func DefaultResourceClass(resource string) string { return zklock.ResourceClass(resource) }
