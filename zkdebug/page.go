package zkdebug

import (
	_ "embed"
	"fmt"
	"html/template"
	"strings"
	"time"
)

// htmlPage is the data of the HTML template.
type htmlPage struct {
	snapshot
	Refresh int // seconds; 0: no automatic reload
}

// HoldersSummary says how current the holders shown are, or "" when the
// page looked none up.
func (p htmlPage) HoldersSummary() string {
	if p.lookups == 0 {
		return ""
	}
	if !p.HoldersDegraded() {
		return fmt.Sprintf("Holders read from ZooKeeper within the last %s.", formatAge(p.ttl()))
	}
	var parts []string
	if p.unavailable > 0 {
		parts = append(parts, fmt.Sprintf("unavailable for %d", p.unavailable))
	}
	if p.stale > 0 {
		parts = append(parts, fmt.Sprintf("stale (an older read) for %d", p.stale))
	}
	return fmt.Sprintf("ZooKeeper did not answer within %s: holder information is %s of %d waiting locks.",
		formatAge(p.budget), strings.Join(parts, " and "), p.lookups)
}

// HoldersDegraded reports whether some holders shown are stale or missing.
func (p htmlPage) HoldersDegraded() bool { return p.stale+p.unavailable > 0 }

func (p htmlPage) ttl() time.Duration {
	if p.Refresh > 0 {
		return time.Duration(p.Refresh) * time.Second
	}
	return DefaultLookupCache
}

// Window names the history's window, for its heading.
func (p htmlPage) Window() string {
	if p.History.bucket == time.Minute {
		return fmt.Sprintf("%d minutes", HistoryMinutes)
	}
	return formatAge(time.Duration(HistoryMinutes) * p.History.bucket)
}

// pageHTML is the page's template. html/template escapes every value for
// its context, so resource names, labels, hosts and paths cannot inject
// markup; the charts are inline SVG laid out in Go (chart.go), with no
// script and no external asset.
//
//go:embed page.html
var pageHTML string

var page = template.Must(template.New("page").Parse(pageHTML))
