// Package restmpl is the one resource-template language of zklockkit: the
// HTTP middleware, the gRPC interceptors and the code generator parse
// templates with it, escape placeholder values with it and report its
// errors, so one template names one resource through every front end.
//
// # Grammar
//
//	template    = part { part } .
//	part        = literal | "{{" | "}}" | placeholder .
//	literal     = lchar { lchar } .
//	lchar       = any character but "{", "}" and control characters .
//	placeholder = "{" [ source ":" ] name "}" .
//	source      = letter { letter } .
//	name        = nchar { nchar } .
//	nchar       = any character but "{", "}", blanks and control characters .
//
// "{{" and "}}" stand for literal braces. Which sources a template may
// name, and what a name means, is the front end's: the HTTP middleware
// binds route parameters ({id}, {param:id}, {*} for Echo's wildcard),
// query parameters ({query:id}), headers ({header:X-Tenant}) and cookies
// ({cookie:session}); the gRPC interceptors bind proto field paths
// ({transfer.from}) and incoming metadata ({metadata:x-tenant}); generated
// code binds Go parameters and their fields ({t.From}).
//
// Two placeholders must be separated by literal text that contains "/".
//
// # Values
//
// A placeholder's value goes into the resource name with "%" written as
// "%25" and "/" as "%2F"; every other byte is kept. With the rule above,
// this makes a template injective: distinct values (or tuples of values)
// always give distinct resource names, and no value can change the
// name's shape ("a/b" cannot pose as two path levels). The name then goes
// through zklock's own escaping to a single znode under the root, which
// is injective too; zklock refuses names with control characters, invalid
// UTF-8 or more than zklock.MaxResourceLen bytes.
//
// An empty value is an error, and so is a value zklock would refuse in a
// name (a control character, invalid UTF-8) and a name that the values
// make longer than zklock.MaxResourceLen bytes: a *zklock.ResourceError,
// so that errors.Is(err, zklock.ErrInvalidResource) holds, whichever
// front end rendered the template. Its Resource is the template and its
// Reason names the placeholder ("value of {id}: contains a control
// character"); the value is never in it, so a front end may send it back
// to the client whose request held the value.
//
// # Errors
//
// A template that does not parse gives a *SyntaxError, which matches
// ErrSyntax and says where the problem is (a byte offset in the template).
package restmpl
