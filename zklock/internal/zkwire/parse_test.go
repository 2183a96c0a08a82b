package zkwire_test

import (
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/zkwire"
)

func TestParseRequest(t *testing.T) {
	path := "/zklock/r/_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-"
	long := make([]byte, zkwire.MaxPathLen+1)
	for _, tc := range []struct {
		name    string
		body    []byte
		xid     int32
		op      int32
		path    string
		creates bool
		ok      bool
		watch   bool   // Watch
		watched string // WatchPath
	}{
		{"create", createBody(7, path), 7, zkwire.OpCreate, path, true, true, false, ""},
		{"multi opening with a create", multiBody(7, path), 7, zkwire.OpMulti, path, true, true, false, ""},
		{"multi of other operations", append(append(append(i32(7), i32(14)...), multiOp(5)...), createBody(0, path)[8:]...), 7, zkwire.OpMulti, "", false, true, false, ""},
		{"truncated multi", append(append(i32(7), i32(14)...), 0, 0), 7, zkwire.OpMulti, "", false, true, false, ""},
		{"getChildren", append(append(i32(9), i32(8)...), createBody(0, path)[8:]...), 9, 8, "", false, true, false, ""},
		{"setWatches", append(append(i32(10), i32(zkwire.OpSetWatches)...), i64(5)...), 10, zkwire.OpSetWatches, "", false, true, false, ""},
		{"create, path past the frame", append(append(i32(7), i32(1)...), i32(int32(len(path)+1))...), 7, zkwire.OpCreate, "", false, true, false, ""},
		{"create, negative path length", append(append(i32(7), i32(1)...), i32(-1)...), 7, zkwire.OpCreate, "", false, true, false, ""},
		{"create, path too long", append(append(append(i32(7), i32(1)...), i32(int32(len(long)))...), long...), 7, zkwire.OpCreate, "", false, true, false, ""},
		{"create, empty path", append(append(i32(7), i32(1)...), i32(0)...), 7, zkwire.OpCreate, "", true, true, false, ""},
		{"short header", i32(7), 0, 0, "", false, false, false, ""},
		{"exists with a watch", readBody(11, zkwire.OpExists, path, true), 11, zkwire.OpExists, "", false, true, true, path},
		{"getData with a watch", readBody(11, zkwire.OpGetData, path, true), 11, zkwire.OpGetData, "", false, true, true, path},
		{"getChildren2 without a watch", readBody(11, zkwire.OpGetChildren2, path, false), 11, zkwire.OpGetChildren2, "", false, true, false, ""},
		{"read, flag past the frame", readBody(11, zkwire.OpExists, path, true)[:8+4+len(path)], 11, zkwire.OpExists, "", false, true, true, ""},
		{"read, path too long", append(append(append(i32(11), i32(zkwire.OpGetData)...), i32(int32(len(long)))...), append(long, 1)...), 11, zkwire.OpGetData, "", false, true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := zkwire.ParseRequest(wanted(tc.body))
			if ok != tc.ok || r.Xid != tc.xid || r.Op != tc.op || string(r.CreatePath) != tc.path {
				t.Fatalf("ParseRequest = %+v (path %q), %v; want xid %d op %d path %q, %v", r, r.CreatePath, ok, tc.xid, tc.op, tc.path, tc.ok)
			}
			if r.Watch != tc.watch || string(r.WatchPath) != tc.watched || (r.WatchPath != nil) != (tc.watched != "") {
				t.Fatalf("Watch %v, WatchPath %q; want %v, %q", r.Watch, r.WatchPath, tc.watch, tc.watched)
			}
			if (r.CreatePath != nil) != tc.creates {
				t.Fatalf("CreatePath %q: reported a create: %v, want %v", r.CreatePath, r.CreatePath != nil, tc.creates)
			}
		})
	}
}

// wanted returns as much of body as RequestWant asks for, asked again
// after each addition as a Splitter does.
func wanted(body []byte) []byte {
	var head []byte
	for {
		need := min(zkwire.RequestWant(head), len(body))
		if len(head) >= need {
			return head
		}
		head = body[:need]
	}
}

func TestParseReplyHeader(t *testing.T) {
	h, ok := zkwire.ParseReplyHeader(append(append(append(i32(7), i64(0x1234)...), i32(-110)...), 1, 2, 3))
	if !ok || h != (zkwire.ReplyHeader{Xid: 7, Zxid: 0x1234, Err: -110}) {
		t.Fatalf("ParseReplyHeader = %+v, %v", h, ok)
	}
	if _, ok := zkwire.ParseReplyHeader(make([]byte, 15)); ok {
		t.Fatal("a 15-byte head parsed as a reply header")
	}
}

func TestParseConnectResponse(t *testing.T) {
	r, ok := zkwire.ParseConnectResponse(append(append(append(i32(0), i32(6000)...), i64(42)...), make([]byte, 20)...))
	if !ok || r != (zkwire.ConnectResponse{Timeout: 6 * time.Second, SessionID: 42}) {
		t.Fatalf("ParseConnectResponse = %+v, %v", r, ok)
	}
	if _, ok := zkwire.ParseConnectResponse(make([]byte, 15)); ok {
		t.Fatal("a 15-byte head parsed as a connect response")
	}
}

func TestParseNotification(t *testing.T) {
	path := "/zklock/r/_c_x-lock-0000000007"
	body := append(append(append(append(i32(zkwire.XidNotification), i64(-1)...), i32(0)...), i32(zkwire.EventNodeDeleted)...), i32(3)...)
	body = append(append(body, i32(int32(len(path)))...), path...)
	n, ok := zkwire.ParseNotification(wantedReply(body))
	if !ok || n.Type != zkwire.EventNodeDeleted || n.State != 3 || string(n.Path) != path {
		t.Fatalf("ParseNotification = %+v (path %q), %v", n, n.Path, ok)
	}
	for name, b := range map[string][]byte{
		"an answer":          append(append(i32(7), i64(9)...), make([]byte, 40)...),
		"path past the head": body[:len(body)-1],
		"no path length":     body[:24],
		"negative length":    append(append([]byte{}, body[:24]...), i32(-1)...),
	} {
		if n, ok := zkwire.ParseNotification(b); ok {
			t.Errorf("%s: parsed as a notification %+v", name, n)
		}
	}
	if w := zkwire.WantReplies(append(append(i32(7), i64(9)...), make([]byte, 40)...), 2); w != zkwire.ReplyHeaderLen {
		t.Fatalf("WantReplies of an answer = %d, want its header only", w)
	}
}

// wantedReply returns as much of body as WantReplies asks for, asked
// again after each addition as a Splitter does.
func wantedReply(body []byte) []byte {
	var head []byte
	for {
		need := min(zkwire.WantReplies(head, 2), len(body))
		if len(head) >= need {
			return head
		}
		head = body[:need]
	}
}
