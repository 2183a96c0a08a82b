//go:build !linux

package cli

import "os"

// isTerminal reports whether f is an *os.File open on a character device
// (a terminal, or /dev/null).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok || file == nil {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
