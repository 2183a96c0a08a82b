package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
)

// ErrNotInstalled is returned (wrapped) when PostgreSQL's server binaries
// cannot be found. Its message holds the install command.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed; install it with: apt-get update && apt-get install -y postgresql")

// Installed returns nil if initdb, postgres and pg_isready are present,
// and otherwise an error wrapping ErrNotInstalled that says what is
// missing.
func Installed() error {
	_, err := binDir()
	return err
}

// binDir returns the directory of the newest installed server binaries.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("%w (no /usr/lib/postgresql/*/bin, no initdb on PATH)", ErrNotInstalled)
	}
	for _, d := range dirs {
		ok := true
		for _, b := range []string{"initdb", "postgres", "pg_isready"} {
			if _, err := os.Stat(filepath.Join(d, b)); err != nil {
				ok = false
			}
		}
		if ok {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w (initdb, postgres or pg_isready missing in %v)", ErrNotInstalled, dirs)
}

// version reads the major version from /usr/lib/postgresql/<v>/bin.
func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}
