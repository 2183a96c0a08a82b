package flight

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A recording is two files, NAME.json and NAME.trace, where NAME is
// "zklock-flight-" then the time it was written (UTC) and "-p" and the
// process id, so that names sort by time.
const (
	prefix     = "zklock-flight-"
	timeLayout = "20060102T150405.000Z"
	tmpPattern = ".zklock-flight-*.tmp"
)

// Entry is a recording in the directory.
type Entry struct {
	Name  string    // NAME: the files are NAME.json and NAME.trace
	Time  time.Time // when it was written
	JSON  string    // the path of its JSON document
	Trace string    // the path of its trace; "" if it has none
}

// write writes a recording of losses, at now; it returns its name.
func (r *Recorder) write(losses []queued, suppressed int, now time.Time) (string, error) {
	name := fmt.Sprintf("%s%s-p%d", prefix, now.UTC().Format(timeLayout), r.pid)
	doc := Document{Version: Version, Time: now, Host: r.host, PID: r.pid, WindowSeconds: r.cfg.Window.Seconds(),
		Suppressed: suppressed, Losses: []Loss{}, Clients: []Client{}}
	err := writeFile(r.cfg.Dir, name+".trace", func(w io.Writer) error {
		_, err := r.fr.WriteTo(w)
		return err
	})
	if err != nil {
		doc.TraceError = err.Error()
	} else {
		doc.Trace = name + ".trace"
	}
	clients := map[Source]int{}
	for _, q := range losses {
		i, ok := clients[q.src]
		if !ok {
			i = len(doc.Clients)
			clients[q.src] = i
			doc.Clients = append(doc.Clients, q.src.Report(now))
		}
		l := q.loss
		l.Client = i
		doc.Losses = append(doc.Losses, l)
	}
	err = writeFile(r.cfg.Dir, name+".json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	})
	if err != nil {
		os.Remove(filepath.Join(r.cfg.Dir, name+".trace"))
		return "", err
	}
	prune(r.cfg.Dir, r.cfg.Keep)
	return name, nil
}

// writeFile writes dir/name through a temporary file renamed into place,
// so that a reader never sees half a file.
func writeFile(dir, name string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(dir, tmpPattern)
	if err != nil {
		return err
	}
	if err = fill(f); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// List returns the recordings in dir, newest first.
func List(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	traces := map[string]bool{}
	var es []Entry
	for _, de := range des {
		n := de.Name()
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if stem, ok := strings.CutSuffix(n, ".trace"); ok {
			traces[stem] = true
			continue
		}
		stem, ok := strings.CutSuffix(n, ".json")
		if !ok {
			continue
		}
		stamp, _, _ := strings.Cut(strings.TrimPrefix(stem, prefix), "-p")
		at, err := time.Parse(timeLayout, stamp)
		if err != nil {
			continue // not one of ours
		}
		es = append(es, Entry{Name: stem, Time: at, JSON: filepath.Join(dir, n)})
	}
	for i := range es {
		if traces[es[i].Name] {
			es[i].Trace = filepath.Join(dir, es[i].Name+".trace")
		}
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Or(b.Time.Compare(a.Time), strings.Compare(b.Name, a.Name)) })
	return es, nil
}

// prune removes the recordings of dir past the newest keep.
func prune(dir string, keep int) {
	es, err := List(dir)
	if err != nil || len(es) <= keep {
		return
	}
	for _, e := range es[keep:] {
		os.Remove(e.JSON)
		if e.Trace != "" {
			os.Remove(e.Trace)
		}
	}
}
