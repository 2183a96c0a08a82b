package zktest

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

const fourLetterTimeout = 5 * time.Second

// FourLetter sends the four-letter word cmd (for example "ruok", "srvr",
// "mntr", "conf", "cons", "wchc", "wchp" or "srst") to the server and
// returns everything it answers up to EOF. The whole exchange times out
// after 5s.
func (s *Server) FourLetter(cmd string) (string, error) {
	return fourLetter(s.Addr(), cmd, fourLetterTimeout)
}

// Mode returns the server's role as reported by srvr: "leader",
// "follower" or "standalone". It fails if the server is not serving.
func (s *Server) Mode() (string, error) {
	return mode(s.Addr(), fourLetterTimeout)
}

func fourLetter(addr, cmd string, timeout time.Duration) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter word %q is not 4 letters", cmd)
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return string(b), fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

func mode(addr string, timeout time.Duration) (string, error) {
	out, err := fourLetter(addr, "srvr", timeout)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("zktest: %s srvr has no Mode: %q", addr, strings.TrimSpace(out))
}
