package tracing

import (
	"runtime/debug"
	"sync"
)

const modulePath = "github.com/zklockkit/zklockkit"

// Version returns the version of this instrumentation, used as the
// instrumentation scope version: the version of the zklockkit module that
// the go command recorded in the program's build information ("v1.2.3"
// when zklockkit is a dependency; a pseudo-version derived from version
// control, or "(devel)", when the program is built inside the module).
func Version() string { return version() }

var version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if bi.Main.Path == modulePath && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path != modulePath {
			continue
		}
		if m.Replace != nil && m.Replace.Version != "" {
			return m.Replace.Version
		}
		if m.Version != "" {
			return m.Version
		}
	}
	return "(devel)"
})
