package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// TestIsTerminal: a pseudo-terminal is a terminal; /dev/null (a character
// device), a pipe, a regular file and a non-file writer are not.
func TestIsTerminal(t *testing.T) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	defer m.Close()
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("TIOCGPTN: %v", e)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("TIOCSPTLCK: %v", e)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	if !isTerminal(slave) {
		t.Error("a pty is not taken for a terminal")
	}

	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var nilFile *os.File
	for name, f := range map[string]any{"/dev/null": null, "a pipe": w, "a file": file, "a buffer": &bytes.Buffer{}, "a nil *os.File": nilFile} {
		if isTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
