package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zklockkit/zklockkit/zklock/internal/queue"
	"github.com/zklockkit/zklockkit/zklock/internal/session"
)

// FuzzOwnerLabel checks the owner data zklock writes into every lock node
// for any label (WithLabel, Label), however hostile: it is valid JSON that
// decodeOwner (Inspect, the CLI) reads back to the same owner, and an
// acquire whose data would exceed MaxValueLen (well under ZooKeeper's 1 MiB
// packet limit) is refused with ErrValueTooLarge before anything is sent.
// repeat makes labels of any size reachable (see below). raw is node data as a foreign
// or hostile client may write it: decoding it never panics and always
// yields valid UTF-8.
func FuzzOwnerLabel(f *testing.F) {
	f.Add("build-42", uint32(0), []byte(`{"host":"h","pid":1,"label":"x"}`))
	f.Add(`"},"host":"evil","x":{"`, uint32(0), []byte("10.0.0.7"))
	f.Add("\xff\xfe\x00\u2028</script>", uint32(3), []byte("\xff{"))
	f.Add("é", uint32(600_000<<6|63), []byte(`{"label":"\ud800"}`))
	f.Add("x", uint32(MaxValueLen<<6|63), []byte(`{"pid":"not a number"}`))
	f.Add(strings.Repeat("\\", 10), uint32(49_000<<6|63), []byte("{"))
	host, _ := os.Hostname()
	c := unconnectedClient()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, label string, repeat uint32, raw []byte) {
		if label != "" {
			if repeat%64 == 63 {
				// one input in 64 (they are slow): from near the limit to
				// just past it (JSON's escapes can make it six times longer)
				label = strings.Repeat(label, min(int(repeat>>6), MaxValueLen/len(label)+1))
			} else {
				label = strings.Repeat(label, int(repeat%16)+1)
			}
		}
		o := Owner{Host: host, PID: os.Getpid(), Label: label}
		data, err := json.Marshal(o)
		if err != nil || !json.Valid(data) {
			t.Fatalf("owner data for label %.40q: %v", label, err)
		}
		got := decodeOwner(data)
		if got.Host != o.Host || got.PID != o.PID || !utf8.ValidString(got.Label) {
			t.Fatalf("decodeOwner round trip: %+v", got)
		}
		if utf8.ValidString(label) && got.Label != label {
			t.Fatalf("label %.40q came back as %.40q", label, got.Label)
		}

		// The real acquire path: with a cancelled context it stops before
		// touching ZooKeeper, after the size check.
		_, err = c.Acquire(cancelled, "r", LeaseLabel(label))
		tooBig := len(data) > MaxValueLen
		if tooBig != errors.Is(err, ErrValueTooLarge) {
			t.Fatalf("label of %d bytes (node data %d bytes, limit %d): acquire err = %v", len(label), len(data), MaxValueLen, err)
		}
		if !tooBig && !errors.Is(err, context.Canceled) {
			t.Fatalf("acquire err = %v, want the context's", err)
		}

		if o := decodeOwner(raw); !utf8.ValidString(o.Label) || !utf8.ValidString(o.Host) {
			t.Fatalf("decodeOwner(%q) = %+v: not UTF-8", raw, o)
		}
	})
}

// unconnectedClient returns a Client with the default options whose
// session never connected: an acquire under a cancelled context runs its
// checks and stops before touching ZooKeeper.
func unconnectedClient() *Client {
	c := &Client{cfg: defaultClientConfig()}
	c.b = &zkBackend{c: c}
	c.sess = session.New(session.Config{SessionTimeout: c.cfg.sessionTimeout, Logger: c.cfg.logger})
	c.q = queue.New(c.sess, queue.Config{Logger: c.cfg.logger})
	return c
}
