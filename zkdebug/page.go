package zkdebug

import "html/template"

// htmlPage is the data of the HTML template.
type htmlPage struct {
	snapshot
	Refresh int // seconds; 0: no automatic reload
}

// page is the HTML view. html/template escapes every value for its
// context, so resource names and paths cannot inject markup.
var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{- if .Refresh}}
<meta http-equiv="refresh" content="{{.Refresh}}">
{{- end}}
<title>zklock: locks of this process</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2330; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
p.meta { color: #555; margin: 0 0 1em; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .35em .8em; border-bottom: 1px solid #dde1e8; white-space: nowrap; }
th { background: #f3f5f8; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, td.node, td.session { font-family: ui-monospace, monospace; font-size: .92em; }
tr.held td.state { color: #0a6b2d; font-weight: 600; }
tr.waiting td.state { color: #9a5b00; font-weight: 600; }
p.foot { margin-top: 1em; color: #777; }
</style>
</head>
<body>
<h1>zklock: locks of this process</h1>
<p class="meta">session <code id="session">{{.Session}}</code> · root <code>{{.Root}}</code> ·
<span id="counts">{{.Held}} held, {{.Waiting}} waiting</span> · {{.Time.Format "2006-01-02 15:04:05 MST"}}</p>
{{- if .Locks}}
<table id="locks">
<thead><tr><th>Resource</th><th>Mode</th><th>State</th><th>Position</th><th>Since</th><th>For</th><th>Token</th><th>Session</th><th>Node</th></tr></thead>
<tbody>
{{- range .Locks}}
<tr class="{{.State}}"><td class="resource">{{.Resource}}</td><td class="mode">{{.Mode}}</td><td class="state">{{.State}}</td><td class="num position">{{.Position}}</td><td class="since">{{.SinceText}}</td><td class="num age">{{.Age}}</td><td class="num token">{{if .Token}}{{.Token}}{{else}}-{{end}}</td><td class="session">{{.Session}}</td><td class="node" title="{{.Path}}">{{.Node}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p id="empty">This process holds no lock and waits for none.</p>
{{- end}}
<p class="foot">Position: lock nodes ahead in the queue (0 once held). For: time since the node joined the queue (for a held lock, wait included). Token: the fencing token. Node: the lock's znode under its queue (hover for the full path). <a href="?format=json">JSON</a></p>
</body>
</html>
`))
