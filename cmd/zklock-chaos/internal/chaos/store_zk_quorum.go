package chaos

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// NoteStoreDiverged: a member's read-back of the ZooKeeper store differs
// from the majority's (Detail: the member, the resource, the entries). A
// fault of ZooKeeper's: every member holds the transactions the ensemble
// committed, in one order.
const NoteStoreDiverged = "store-diverged"

// quorumLog merges the members' read-backs of the store: the log is, entry
// by entry, the write a majority of all the members hold there (no entry
// where a majority holds none, or where no write has a majority), and
// each register the state a majority read. It returns the log's rows,
// what contradicts itself in it (wholeLog, and the problems a majority
// of members' logs show), a note for each member and resource that
// differs from the majority, and an error when fewer than a majority of
// the members could be read.
func quorumLog(views []memberLog) (rows []Event, problems, diverged []string, err error) {
	need := len(views)/2 + 1
	var read []memberLog
	var errs []error
	for _, v := range views {
		if v.err != nil {
			errs = append(errs, fmt.Errorf("zk%d: %w", v.server, v.err))
			continue
		}
		read = append(read, v)
	}
	if len(read) < need {
		return nil, nil, nil, fmt.Errorf("chaos: reading the zookeeper store: %d of %d members read: %w", len(read), len(views), errors.Join(errs...))
	}
	for _, e := range errs {
		diverged = append(diverged, fmt.Sprintf("%v: not read; the log is the majority's of the others", e))
	}

	type key struct {
		res   string
		order int64
	}
	held := make([]map[key]Event, len(read))
	all := map[key]bool{}
	for i, v := range read {
		held[i] = make(map[key]Event, len(v.rows))
		for _, r := range v.rows {
			k := key{r.Resource, r.Order}
			held[i][k] = r
			all[k] = true
		}
	}
	keys := make([]key, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.res, b.res), cmp.Compare(a.order, b.order)) })

	// per member and resource, the entries where it differs
	type diff struct{ lacks, other, extra []int64 }
	diffs := make([]map[string]*diff, len(read))
	for i := range diffs {
		diffs[i] = map[string]*diff{}
	}
	note := func(i int, res string) *diff {
		d := diffs[i][res]
		if d == nil {
			d = &diff{}
			diffs[i][res] = d
		}
		return d
	}
	for _, k := range keys {
		count := map[int64]int{}
		for i := range read {
			if r, ok := held[i][k]; ok {
				count[r.WriteID]++
			}
		}
		var win int64
		var found bool
		for id, n := range count {
			if n >= need {
				win, found = id, true
			}
		}
		for i := range read {
			r, ok := held[i][k]
			switch {
			case found && ok && r.WriteID == win:
				if len(rows) == 0 || rows[len(rows)-1].Resource != k.res || rows[len(rows)-1].Order != k.order {
					rows = append(rows, r)
				}
			case found && ok:
				note(i, k.res).other = append(note(i, k.res).other, k.order)
			case found:
				note(i, k.res).lacks = append(note(i, k.res).lacks, k.order)
			case ok:
				note(i, k.res).extra = append(note(i, k.res).extra, k.order)
			}
		}
	}

	registers := map[string]storeRegister{}
	resources := map[string]bool{}
	for _, v := range read {
		for res := range v.registers {
			resources[res] = true
		}
	}
	for _, res := range slicesSorted(resources) {
		count := map[storeRegister]int{}
		for _, v := range read {
			if g, ok := v.registers[res]; ok {
				count[g]++
			}
		}
		var win storeRegister
		found := false
		for g, n := range count {
			if n >= need {
				win, found = g, true
			}
		}
		if found {
			registers[res] = win
		}
		for _, v := range read {
			if g, ok := v.registers[res]; !ok || !found || g != win {
				diverged = append(diverged, fmt.Sprintf("zk%d's register of %s: %s; the majority's: %s", v.server, res, registerText(g, ok), registerText(win, found)))
			}
		}
	}

	seen := map[string]int{}
	for _, v := range read {
		for _, p := range v.problems {
			seen[p]++
		}
	}
	for _, v := range read {
		for _, p := range v.problems {
			if seen[p] < need {
				diverged = append(diverged, fmt.Sprintf("zk%d's log: %s (not the majority's)", v.server, p))
			}
		}
	}
	for _, p := range slicesSorted(seen) {
		if seen[p] >= need {
			problems = append(problems, p)
		}
	}

	for i, v := range read {
		for _, res := range slicesSorted(diffs[i]) {
			d := diffs[i][res]
			var parts []string
			for _, c := range []struct {
				what string
				at   []int64
			}{
				{"lacks %d entries the majority holds (%s)", d.lacks},
				{"holds another write than the majority's at %d entries (%s)", d.other},
				{"holds %d entries the majority does not (%s)", d.extra},
			} {
				if len(c.at) > 0 {
					parts = append(parts, fmt.Sprintf(c.what, len(c.at), spans(c.at)))
				}
			}
			diverged = append(diverged, fmt.Sprintf("zk%d's log of %s %s", v.server, res, strings.Join(parts, "; ")))
		}
	}
	return rows, append(problems, wholeLog(rows, registers)...), diverged, nil
}

func registerText(g storeRegister, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("version %d (token %#x, write %#x)", g.N, g.Token, g.WriteID)
}

// spans writes sorted numbers as ranges ("4196-4203, 4300"), the first
// eight of them.
func spans(at []int64) string {
	var out []string
	for i := 0; i < len(at); {
		j := i
		for j+1 < len(at) && at[j+1] == at[j]+1 {
			j++
		}
		if len(out) == 8 {
			out = append(out, "…")
			break
		}
		if j == i {
			out = append(out, fmt.Sprint(at[i]))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", at[i], at[j]))
		}
		i = j + 1
	}
	return strings.Join(out, ", ")
}
