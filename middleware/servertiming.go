package middleware

import (
	"strconv"
	"strings"
	"time"
)

// HeaderServerTiming is the response header that reports the lock wait.
const HeaderServerTiming = "Server-Timing"

// serverTimingMetric is the metric name in the Server-Timing header.
const serverTimingMetric = "zklock"

// maxTimingDesc bounds how much of the resource name goes into the header.
const maxTimingDesc = 128

// serverTiming formats the lock wait as a Server-Timing entry:
// zklock;dur=12.4;desc="accounts/42" (dur in milliseconds). The resource is
// written as a quoted-string: '"' and '\' are escaped, bytes outside
// printable ASCII are written %XX, and a long name is cut short.
func serverTiming(resource string, waited time.Duration) string {
	var b strings.Builder
	b.Grow(len(serverTimingMetric) + 24 + min(len(resource), maxTimingDesc))
	b.WriteString(serverTimingMetric)
	b.WriteString(";dur=")
	b.WriteString(strconv.FormatFloat(float64(waited.Microseconds())/1000, 'f', -1, 64))
	b.WriteString(`;desc="`)
	for i := 0; i < len(resource); i++ {
		if i == maxTimingDesc {
			b.WriteString("...")
			break
		}
		switch ch := resource[i]; {
		case ch == '"' || ch == '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch < 0x20 || ch >= 0x7f:
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[ch>>4])
			b.WriteByte(hex[ch&15])
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('"')
	return b.String()
}
