package zkdebug

import (
	"encoding/json"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Recordings returns an http.Handler that lists the recordings of rec (a
// zklock.FlightRecorder) and serves their files, for an operator who
// cannot reach the process's disk:
//
//	GET                  the list, newest first: HTML, or JSON with ?format=json
//	GET ?file=NAME.json  a recording's JSON document
//	GET ?file=NAME.trace its trace window, for `go tool trace`
//	GET ?latest=json     the newest recording's JSON (?latest=trace: its trace)
//
// Only the files of the recordings listed are served. Mount it on an
// internal listener, as Handler:
//
//	mux.Handle("/debug/zklock/recordings", zkdebug.Recordings(rec))
//
// and read the latest trace with
//
//	curl -o loss.trace 'http://host/debug/zklock/recordings?latest=trace'
//	go tool trace loss.trace
//
// It panics if rec is nil.
func Recordings(rec *zklock.FlightRecorder) http.Handler {
	if rec == nil {
		panic("zkdebug: Recordings called with a nil *zklock.FlightRecorder")
	}
	return recordingsHandler{rec}
}

type recordingsHandler struct{ rec *zklock.FlightRecorder }

// recordingView is one recording in the list.
type recordingView struct {
	Name  string    `json:"name"`
	Time  time.Time `json:"time"`
	JSON  string    `json:"json"`            // the URL of its JSON, relative to the list's
	Trace string    `json:"trace,omitempty"` // the URL of its trace
	Bytes int64     `json:"bytes"`           // both files' size
}

// recordingsView is the list's JSON.
type recordingsView struct {
	Dir        string          `json:"dir"`
	LastError  string          `json:"last_error,omitempty"` // why the last recording could not be written
	Recordings []recordingView `json:"recordings"`
}

func (h recordingsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "zkdebug: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rs, err := h.rec.Recordings()
	if err != nil {
		http.Error(w, "zkdebug: listing the recordings: "+err.Error(), http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	switch file, latest := q.Get("file"), q.Get("latest"); {
	case file != "":
		for _, rc := range rs {
			switch file {
			case rc.Name + ".json":
				serveFile(w, r, rc.JSON)
				return
			case rc.Name + ".trace":
				if rc.Trace != "" {
					serveFile(w, r, rc.Trace)
					return
				}
			}
		}
		http.Error(w, "zkdebug: no recording file "+strconv.Quote(file), http.StatusNotFound)
		return
	case latest == "json" || latest == "trace":
		switch {
		case len(rs) == 0:
			http.Error(w, "zkdebug: no recording yet", http.StatusNotFound)
		case latest == "json":
			serveFile(w, r, rs[0].JSON)
		case rs[0].Trace == "":
			http.Error(w, "zkdebug: the latest recording has no trace (its JSON says why)", http.StatusNotFound)
		default:
			serveFile(w, r, rs[0].Trace)
		}
		return
	case latest != "":
		http.Error(w, "zkdebug: latest must be json or trace", http.StatusBadRequest)
		return
	}
	v := recordingsView{Dir: h.rec.Dir(), Recordings: []recordingView{}}
	if err := h.rec.Err(); err != nil {
		v.LastError = err.Error()
	}
	for _, rc := range rs {
		rv := recordingView{Name: rc.Name, Time: rc.Time, JSON: "?file=" + rc.Name + ".json", Bytes: size(rc.JSON) + size(rc.Trace)}
		if rc.Trace != "" {
			rv.Trace = "?file=" + rc.Name + ".trace"
		}
		v.Recordings = append(v.Recordings, rv)
	}
	switch f := q.Get("format"); f {
	case "json":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	case "", "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = recordingsPage.Execute(w, v)
	default:
		http.Error(w, "zkdebug: unknown format "+strconv.Quote(f)+" (want html or json)", http.StatusBadRequest)
	}
}

// serveFile serves a recording's file, a download for a trace.
func serveFile(w http.ResponseWriter, r *http.Request, path string) {
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, "zkdebug: "+err.Error(), http.StatusNotFound) // removed since it was listed
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.Error(w, "zkdebug: "+err.Error(), http.StatusInternalServerError)
		return
	}
	name := filepath.Base(path)
	if strings.HasSuffix(name, ".json") {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

func size(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

var recordingsPage = template.Must(template.New("recordings").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>zklock: flight recordings</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2330; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .35em .8em; border-bottom: 1px solid #dde1e8; white-space: nowrap; }
th { background: #f3f5f8; }
p.warn { background: #fff4e0; border-left: 4px solid #d08a00; padding: .4em .8em; }
</style>
</head>
<body>
<h1>zklock: flight recordings</h1>
<p>Written to <code>{{.Dir}}</code> when a lease is lost: the trace window (open it with <code>go tool trace FILE</code>) and the client's wire history.</p>
{{- with .LastError}}
<p class="warn">The last recording could not be written: {{.}}</p>
{{- end}}
{{- if .Recordings}}
<table id="recordings">
<thead><tr><th>Written</th><th>Recording</th><th>Files</th><th>Size</th></tr></thead>
<tbody>
{{- range .Recordings}}
<tr><td>{{.Time.Format "2006-01-02 15:04:05.000 MST"}}</td><td><code>{{.Name}}</code></td>
<td><a href="{{.JSON}}">JSON</a>{{with .Trace}} · <a href="{{.}}">trace</a>{{end}}</td><td>{{.Bytes}} bytes</td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p id="none">No recording yet: no lease has been lost since the recordings began.</p>
{{- end}}
</body>
</html>
`))
