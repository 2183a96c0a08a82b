package zkdebug

import "time"

// SetHistoryBucket sets the width of h's buckets (a minute outside
// tests), so that a test of a few seconds fills a whole window with real
// events. Call it before h observes anything.
func SetHistoryBucket(h *History, d time.Duration) { h.bucket = d }
