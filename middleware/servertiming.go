package middleware

import (
	"strconv"
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
// printable ASCII are written %XX, and a long name is cut short. It makes
// one allocation, the string.
func serverTiming(resource string, waited time.Duration) string {
	var buf [64 + 3*maxTimingDesc]byte
	b := append(buf[:0], serverTimingMetric...)
	b = append(b, ";dur="...)
	b = strconv.AppendFloat(b, float64(waited.Microseconds())/1000, 'f', -1, 64)
	b = append(b, `;desc="`...)
	for i := 0; i < len(resource); i++ {
		if i == maxTimingDesc {
			b = append(b, "..."...)
			break
		}
		switch ch := resource[i]; {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch < 0x20 || ch >= 0x7f:
			const hex = "0123456789ABCDEF"
			b = append(b, '%', hex[ch>>4], hex[ch&15])
		default:
			b = append(b, ch)
		}
	}
	b = append(b, '"')
	return string(b)
}
