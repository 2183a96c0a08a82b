package zktest

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Stop is a stretch in which a server's JVM ran none of ZooKeeper's code:
// a safepoint, which a garbage collection of the SerialGC the servers run
// with always is. Its clients' requests wait meanwhile, and a leader's stop
// holds every write of the ensemble. On a machine whose cores the servers
// share with their clients, a young collection of 50 ms of work can stop
// a server for half a second (the load phase of the chaos campaign: 0.25
// to 0.78 s, several a minute).
type Stop struct {
	Start, End time.Time
	Cause      string // the safepoint's VM operation, as "GenCollectForAllocation"
}

// stopLogPattern names each JVM's safepoint log in the server's directory
// (%p: the JVM's pid, so that a restart does not write over its
// predecessor's).
const stopLogPattern = "jvm-stops-%p.log"

// stopLogArgs returns the JVM option that logs every safepoint to dir, or
// none when dir's path cannot be written in the option (-Xlog splits on
// ':').
func stopLogArgs(dir string) []string {
	if strings.ContainsAny(dir, ":,= ") {
		return nil
	}
	return []string{"-Xlog:safepoint=info:file=" + filepath.Join(dir, stopLogPattern) + ":utctime"}
}

// Stops returns the stops of at least min of every JVM the server has run,
// in the order they ended, read from the safepoint logs in its directory.
// A stop's end is when the JVM logged it, to the millisecond; its start is
// that less its length, to the nanosecond.
func (s *Server) Stops(min time.Duration) ([]Stop, error) {
	return readStops(s.dir, min)
}

func readStops(dir string, min time.Duration) ([]Stop, error) {
	// The JVM rotates a full log to name.0, name.1, ...
	files, err := filepath.Glob(filepath.Join(dir, "jvm-stops-*.log*"))
	if err != nil {
		return nil, err
	}
	var out []Stop
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			st, ok, err := parseStop(sc.Text())
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("zktest: %s: %w", name, err)
			}
			if ok && st.End.Sub(st.Start) >= min {
				out = append(out, st)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b Stop) int { return cmp.Compare(a.End.UnixNano(), b.End.UnixNano()) })
	return out, nil
}

// stopLine matches a line of -Xlog:safepoint with the utctime decoration
// (JDK 17):
//
//	[2026-11-28T04:21:14.243+0000] Safepoint "GenCollectForAllocation", Time since last: 28990050 ns, Reaching safepoint: 5281 ns, Cleanup: 24807 ns, At safepoint: 28774621 ns, Total: 28804709 ns
var stopLine = regexp.MustCompile(`^\[([^\]]+)\] Safepoint "([^"]*)",.* Total: (\d+) ns`)

// parseStop reads one line of a safepoint log; ok is false for a line that
// is not a safepoint's (the log's other lines, a line cut by a kill).
func parseStop(line string) (st Stop, ok bool, err error) {
	m := stopLine.FindStringSubmatch(line)
	if m == nil {
		return Stop{}, false, nil
	}
	end, err := time.Parse("2006-01-02T15:04:05.000-0700", m[1])
	if err != nil {
		return Stop{}, false, err
	}
	total, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return Stop{}, false, err
	}
	return Stop{Start: end.Add(-time.Duration(total)), End: end, Cause: m[2]}, true, nil
}
