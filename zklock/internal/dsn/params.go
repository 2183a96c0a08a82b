package dsn

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/zklockkit/zklockkit/internal/duration"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// maxPasswordFile bounds what is read of a password file.
const maxPasswordFile = 4096

// dsnParams are the parameters a connection string takes.
var dsnParams = []string{"label", "loss_margin", "password_file", "session_timeout"}

// parseParams takes the parameters after "?" and returns the password
// file, if any.
func (d *parser) parseParams(query string) (passwordFile string, err error) {
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", d.bad("parameters: %v", err)
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := q[k]
		switch {
		case k == "user" || k == "password":
			return "", d.bad("parameter %q: write the user in the URL, zk://USER@HOSTS, and the password in password_file, the URL or $%s", k, EnvPassword)
		case !slices.Contains(dsnParams, k):
			return "", d.bad("unknown parameter %q (known: %s)", k, strings.Join(dsnParams, ", "))
		case len(vs) > 1:
			return "", d.bad("parameter %s given %d times", k, len(vs))
		case vs[0] == "":
			return "", d.bad("parameter %s: empty value", k)
		}
		v := vs[0]
		var value any = v
		switch k {
		case "session_timeout", "loss_margin":
			dur, err := duration.Parse(v)
			if err != nil {
				return "", d.bad("parameter %s: %v", k, err)
			}
			value = dur
		case "password_file":
			passwordFile = v
			continue
		}
		// The client option's own check, reported against the parameter.
		if d.checks.Param != nil {
			if err := d.checks.Param(k, value); err != nil {
				return "", d.bad("parameter %s: %s", k, strings.TrimPrefix(err.Error(), errs.ErrInvalidOption.Error()+": "))
			}
		}
		if d.Params == nil {
			d.Params = make(map[string]any)
		}
		d.Params[k] = value
	}
	return passwordFile, nil
}

// userInfo decodes the user info of a zk:// string.
func (d *parser) userInfo(s string) (user, password string, hasPassword bool, err error) {
	if strings.Contains(s, "@") {
		return "", "", false, d.bad(`user info: write "@" as %%40`)
	}
	u, p, hasPassword := strings.Cut(s, ":")
	if user, err = url.PathUnescape(u); err != nil {
		return "", "", false, d.bad("user: bad percent-encoding")
	}
	if password, err = url.PathUnescape(p); err != nil {
		return "", "", false, d.bad("password: bad percent-encoding")
	}
	switch {
	case user == "":
		return "", "", false, d.bad("user info without a user name")
	case hasPassword && password == "":
		return "", "", false, d.bad("empty password after %q (drop the colon to take the password from password_file or $%s)", user+":", EnvPassword)
	}
	return user, password, hasPassword, nil
}

// auth adds digest authentication when the string names a user.
func (d *parser) auth(hasUser bool, user, password string, hasPassword bool, passwordFile string) error {
	switch {
	case !hasUser && passwordFile != "":
		return d.bad("password_file without a user: write zk://USER@HOSTS...")
	case !hasUser:
		return nil
	case hasPassword && passwordFile != "":
		return d.bad("password given twice: in the URL and in password_file")
	case passwordFile != "":
		p, err := readPasswordFile(passwordFile)
		if err != nil {
			return d.bad("password_file: %v", err)
		}
		password = p
	case !hasPassword:
		password = os.Getenv(EnvPassword)
		if password == "" {
			return d.bad("user %q has no password: add ?password_file=FILE, set $%s, or write zk://%s:PASSWORD@...", user, EnvPassword, user)
		}
	}
	d.User, d.Password = user, password
	return nil
}

// readPasswordFile reads a password from a regular file of at most
// maxPasswordFile bytes, without its trailing newline. The file is
// checked before it is opened, so that a FIFO or a device never blocks
// the parse.
func readPasswordFile(name string) (string, error) {
	fi, err := os.Stat(name)
	switch {
	case err != nil:
		return "", err
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", name)
	case fi.Size() > maxPasswordFile:
		return "", fmt.Errorf("%s is larger than %d bytes", name, maxPasswordFile)
	case fi.Size() == 0:
		return "", fmt.Errorf("%s is empty", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	switch {
	case err != nil:
		return "", err
	case len(b) > maxPasswordFile:
		return "", fmt.Errorf("%s is larger than %d bytes", name, maxPasswordFile)
	}
	p := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if p == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	return p, nil
}
