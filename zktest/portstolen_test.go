package zktest_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// If another process takes a stopped server's port, Start must fail rather
// than report the other process as this server. The thief here answers the
// four-letter words like a serving ZooKeeper with another data directory.
func TestStartOnStolenPort(t *testing.T) {
	t.Parallel()
	s, err := zktest.StartServer(zktest.WithForceSync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", s.Addr())
	if err != nil {
		t.Fatalf("taking the stopped server's port: %v", err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				cmd := make([]byte, 4)
				if _, err := io.ReadFull(bufio.NewReader(c), cmd); err != nil {
					return
				}
				switch string(cmd) {
				case "ruok":
					io.WriteString(c, "imok")
				case "srvr":
					io.WriteString(c, "Zookeeper version: 3.8.0\nMode: standalone\n")
				case "conf":
					io.WriteString(c, "clientPort=1\ndataDir=/somewhere/else/version-2\n")
				}
			}()
		}
	}()
	err = s.Start()
	if err == nil {
		t.Fatal("Start succeeded although another process answers on its port")
	}
	if !strings.Contains(err.Error(), s.Addr()) {
		t.Errorf("Start error does not name the address: %v", err)
	}
	t.Logf("Start on a stolen port: %.200s", err)
}
