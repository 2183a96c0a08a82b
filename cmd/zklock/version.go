package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version says which zklock this is, from the build information the Go
// toolchain records: the module version ("v1.2.0" when installed with go
// install ...@v1.2.0; for go build in a git checkout the pseudo-version
// Go makes from the commit; "(devel)" when Go recorded no version), the
// commit and whether the tree had changes when it was built from one, and
// the Go version. For example:
//
//	zklock v1.2.0 (go1.26.8 linux/amd64)
//	zklock v0.0.0-20261126123205-93600a6d14e3+dirty commit 93600a6d14e3 modified (go1.26.8 linux/amd64)
//	zklock (devel) (go1.26.8 linux/amd64)
//
// docs/operations.md lists every form; TestVersionMatchesDocs checks it.
func Version() string {
	b := []string{"zklock"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b = append(b, bi.Main.Version)
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			b = append(b, "commit", rev[:min(12, len(rev))])
			if settings["vcs.modified"] == "true" {
				b = append(b, "modified")
			}
		}
	} else {
		b = append(b, "(unknown)")
	}
	b = append(b, "("+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")")
	return strings.Join(b, " ")
}
