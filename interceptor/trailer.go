package interceptor

import (
	"strconv"
	"time"

	"google.golang.org/grpc/metadata"
)

// WaitTrailerKey is the trailer in which the interceptor sends how long the
// call waited for its lock, in milliseconds as a decimal number ("12.345").
// It is sent with every locked call once the acquire was attempted, except
// that a call ended by its deadline or by the client's cancellation has
// no trailers to deliver.
const WaitTrailerKey = "zklock-wait-ms"

// WaitFromTrailer returns the lock wait time the server sent in trailer md
// (see WaitTrailerKey), and whether it was there.
//
//	var tr metadata.MD
//	_, err := client.Transfer(ctx, req, grpc.Trailer(&tr))
//	wait, ok := interceptor.WaitFromTrailer(tr)
func WaitFromTrailer(md metadata.MD) (time.Duration, bool) {
	vs := md.Get(WaitTrailerKey)
	if len(vs) == 0 {
		return 0, false
	}
	ms, err := strconv.ParseFloat(vs[len(vs)-1], 64)
	if err != nil || ms < 0 {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

func waitTrailer(d time.Duration) metadata.MD {
	ms := strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', -1, 64)
	return metadata.MD{WaitTrailerKey: []string{ms}}
}
