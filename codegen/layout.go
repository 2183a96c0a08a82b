package codegen

import tmpl "text/template"

// fileView is what the file template prints.
type fileView struct {
	Header   string
	Package  string
	Imports  []spec
	Wrappers []wrapperView
	Funcs    []funcView
	Helpers  string // source of the helper functions
}

type wrapperView struct {
	Doc     []string
	Name    string // LockedAccounts
	Type    string // Accounts
	Field   string // locker
	Locker  string // zklock.Locker
	CtorDoc []string
	Ctor    string
	Panic   string // the message for nil arguments
	Methods []funcView
}

type funcView struct {
	Doc      []string
	Recv     string // "(w LockedAccounts) " or ""
	Name     string
	Params   string
	Results  string
	Lease    string
	Err      string
	Locker   string // w.locker, or the locker parameter
	Acquire  string // Acquire or AcquireAll
	Ctx      string
	Resource string
	Opts     []string
	Returns  string
	Inner    string // w.Accounts.Withdraw, or Withdraw
	Args     []string
	Values   []valueView // placeholders' values, escaped before the acquire
}

// valueView is one placeholder's value: Var, Err := Func(Template,
// Placeholder, Expr).
type valueView struct {
	Var, Func, Template, Placeholder, Expr string
}

var fileTemplate = tmpl.Must(tmpl.New("file").Parse(`{{.Header}}

package {{.Package}}

import (
{{range .Imports}}{{if .Gap}}
{{end}}	{{with .Name}}{{.}} {{end}}{{printf "%q" .Path}}
{{end}})
{{range .Wrappers}}
{{range .Doc}}// {{.}}
{{end}}type {{.Name}} struct {
	*{{.Type}}
	{{.Field}} {{.Locker}}
}

{{range .CtorDoc}}// {{.}}
{{end}}func {{.Ctor}}(inner *{{.Type}}, locker {{.Locker}}) *{{.Name}} {
	if inner == nil || locker == nil {
		panic({{printf "%q" .Panic}})
	}
	return &{{.Name}}{ {{- .Type}}: inner, {{.Field}}: locker}
}
{{range .Methods}}{{template "func" .}}{{end}}{{end}}
{{- range .Funcs}}{{template "func" .}}{{end}}
{{- .Helpers}}
{{- define "func"}}
{{range .Doc}}// {{.}}
{{end}}func {{.Recv}}{{.Name}}({{.Params}}) ({{.Results}}) {
{{- range .Values}}
	{{.Var}}, {{$.Err}} := {{.Func}}({{.Template}}, {{.Placeholder}}, {{.Expr}})
	if {{$.Err}} != nil {
		return {{$.Returns}}
	}
{{- end}}
	{{.Lease}}, {{.Err}} := {{.Locker}}.{{.Acquire}}({{.Ctx}}, {{.Resource}}{{range .Opts}}, {{.}}{{end}})
	if {{.Err}} != nil {
		return {{.Returns}}
	}
	defer {{.Lease}}.Release({{.Ctx}})
	{{.Returns}} = {{.Inner}}({{.Lease}}.Context({{.Ctx}}){{range .Args}}, {{.}}{{end}})
	if {{.Err}} == nil {
		{{.Err}} = {{.Lease}}.Err()
	}
	return {{.Returns}}
}
{{end}}`))
