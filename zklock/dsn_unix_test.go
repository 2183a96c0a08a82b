//go:build unix

package zklock

import (
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A password_file that is a FIFO is refused without blocking on it.
func TestParseDSNPasswordFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	_, _, err := ParseDSN("zk://app@h1?password_file=" + url.QueryEscape(fifo))
	if err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
		t.Errorf("ParseDSN with a FIFO as password file = %v", err)
	}
}
