package crossadapter_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"

	echo4 "github.com/labstack/echo/v4"
	echo5 "github.com/labstack/echo/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/internal/crossadapter"
	zkmw "github.com/zklockkit/zklockkit/middleware"
	zkecho4 "github.com/zklockkit/zklockkit/middleware/zkecho"
	zkecho5 "github.com/zklockkit/zklockkit/middleware/zkecho/v5"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// template is the one template every front end is given.
const template = "accounts/{id}"

// outcome is what one front end did with a key: the queue znode of the
// lease the handler ran under, or the error that refused it, as a string.
type outcome struct {
	queue string
	err   string
}

// frontEnd locks key through one front end.
type frontEnd struct {
	name string
	lock func(t *testing.T, key string) outcome
}

// record keeps what a handler saw, and what an error handler got.
type record struct {
	mu  sync.Mutex
	out outcome
}

func (r *record) path(p string) {
	r.mu.Lock()
	r.out.queue = path.Dir(p)
	r.mu.Unlock()
}

// refused records the zklock error inside a front end's lock error.
func (r *record) refused(err error) {
	var re *zklock.ResourceError
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.As(err, &re) {
		r.out.err = re.Error()
	} else {
		r.out.err = "unexpected: " + err.Error()
	}
}

func (r *record) take() outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.out
	r.out = outcome{}
	return o
}

func get(t *testing.T, u string) {
	t.Helper()
	resp, err := http.Post(u, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// frontEnds are the front ends, each given template; locked is the
// wrapper zklockgen generated for the same template.
func frontEnds(t *testing.T, c *zklock.Client, template string, locked func(context.Context, zklock.Locker, string, *string) error) []frontEnd {
	var fes []frontEnd

	// net/http on a ServeMux: {id...} so that an empty key reaches the
	// middleware ("/n/" matches with id "").
	{
		var rec record
		mux := http.NewServeMux()
		mux.Handle("POST /n/{id...}", zkmw.LockWithConfig(zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: template},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				rec.refused(err)
				zkmw.DefaultErrorHandler(w, r, err)
			}})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rec.path(zkmw.LeaseFrom(r).Path()) })))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		fes = append(fes, frontEnd{"net/http", func(t *testing.T, key string) outcome {
			get(t, srv.URL+"/n/"+url.PathEscape(key))
			return rec.take()
		}})
	}
	// Echo v4 and v5: a parameter between two segments can be empty.
	{
		var rec record
		e := echo4.New()
		e.POST("/e/:id/x", func(c echo4.Context) error { rec.path(zkecho4.LeaseFrom(c).Path()); return nil },
			zkecho4.LockWithConfig(zkecho4.Config{Locker: c, Rule: zkecho4.Rule{Resource: template},
				ErrorHandler: func(c echo4.Context, err error) error { rec.refused(err); return zkecho4.DefaultErrorHandler(c, err) }}))
		srv := httptest.NewServer(e)
		t.Cleanup(srv.Close)
		fes = append(fes, frontEnd{"echo v4", func(t *testing.T, key string) outcome {
			get(t, srv.URL+"/e/"+url.PathEscape(key)+"/x")
			return rec.take()
		}})
	}
	{
		var rec record
		e := echo5.New()
		e.POST("/e/:id/x", func(c *echo5.Context) error { rec.path(zkecho5.LeaseFrom(c).Path()); return nil },
			zkecho5.LockWithConfig(zkecho5.Config{Locker: c, Rule: zkecho5.Rule{Resource: template},
				ErrorHandler: func(c *echo5.Context, err error) error { rec.refused(err); return zkecho5.DefaultErrorHandler(c, err) }}))
		srv := httptest.NewServer(e)
		t.Cleanup(srv.Close)
		fes = append(fes, frontEnd{"echo v5", func(t *testing.T, key string) outcome {
			get(t, srv.URL+"/e/"+url.PathEscape(key)+"/x")
			return rec.take()
		}})
	}
	// gRPC: the unary interceptor over a message with a string field "id",
	// called as gRPC calls it.
	{
		msgType := idMessage(t)
		const method = "/cross.Svc/Lock"
		unary := interceptor.UnaryServerInterceptor(c, interceptor.WithMethod(method, interceptor.Resource(template)))
		fes = append(fes, frontEnd{"grpc", func(t *testing.T, key string) outcome {
			req := msgType.New()
			req.Set(req.Descriptor().Fields().ByName("id"), protoreflect.ValueOfString(key))
			var out outcome
			_, err := unary(context.Background(), req.Interface(), &grpc.UnaryServerInfo{FullMethod: method},
				func(ctx context.Context, _ any) (any, error) {
					out.queue = path.Dir(zklock.LeaseFromContext(ctx).Path())
					return nil, nil
				})
			if err != nil {
				// The status message is the zklock error's, prefixed once.
				out.err = status.Convert(err).Message()
			}
			return out
		}})
	}
	// A wrapper generated by zklockgen.
	fes = append(fes, frontEnd{"codegen", func(t *testing.T, key string) outcome {
		var p string
		err := locked(context.Background(), c, key, &p)
		var out outcome
		if err != nil {
			var re *zklock.ResourceError
			if errors.As(err, &re) {
				out.err = re.Error()
			} else {
				out.err = "unexpected: " + err.Error()
			}
			return out
		}
		out.queue = path.Dir(p)
		return out
	}})
	return fes
}

// idMessage is a message type with one string field, id.
func idMessage(t *testing.T) protoreflect.MessageType {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("cross.proto"),
		Package: proto.String("cross"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Req"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("id"), Number: proto.Int32(1),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessageType(fd.Messages().Get(0))
}

// One template and one key lock the same znode through every front end,
// and distinct keys lock distinct znodes; an empty key is the same typed
// error everywhere (the gRPC status carries its message).
func TestIntegration_SameKeySameZnode(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := connect(t, root)
	fes := frontEnds(t, c, template, crossadapter.LockedTouch)

	keys := []string{"42", "a/b", "a%2Fb", "a%2Fb/", "100%", "%", "{x}", "{{", "}", "é☃ 日本", "..", "a b", "+"}
	queues := map[string]string{} // queue → key
	for _, key := range keys {
		want := root + "/" + zklock.EscapeResource("accounts/"+strings.NewReplacer("%", "%25", "/", "%2F").Replace(key))
		for _, fe := range fes {
			if fe.name == "net/http" && key == ".." {
				continue // ServeMux cleans "/n/.." to "/" and redirects: no route sees it
			}
			got := fe.lock(t, key)
			if got.err != "" || got.queue != want {
				t.Errorf("%s, key %q: queue %q, error %q; want queue %q", fe.name, key, got.queue, got.err, want)
			}
		}
		if other, dup := queues[want]; dup {
			t.Errorf("keys %q and %q share the queue %s", key, other, want)
		}
		queues[want] = key
	}

	wantErr := (&zklock.ResourceError{Resource: template, Reason: "empty value for {id}"}).Error()
	for _, fe := range fes {
		if got := fe.lock(t, ""); got.err != wantErr || got.queue != "" {
			t.Errorf("%s, empty key: %+v; want the error %q", fe.name, got, wantErr)
		}
	}
	// A key zklock refuses is the same error through every adapter: it
	// names the placeholder, never the key. (Generated code leaves the
	// check to zklock, whose error names the resource.)
	wantErr = (&zklock.ResourceError{Resource: template, Reason: "value of {id}: contains a control character"}).Error()
	for _, fe := range fes {
		if fe.name == "codegen" {
			continue
		}
		if got := fe.lock(t, "a\x00b"); got.err != wantErr || got.queue != "" {
			t.Errorf("%s, NUL in the key: %+v; want the error %q", fe.name, got, wantErr)
		}
	}
	if ls := c.Locks(); len(ls) != 0 {
		t.Errorf("lock nodes left: %v", ls)
	}
}
