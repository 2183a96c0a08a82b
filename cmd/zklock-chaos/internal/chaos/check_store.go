package chaos

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// storeIn and storeOut are a write to the fenced store and its verdict,
// as porcupine operations.
type storeIn struct {
	resource, mode string
	token          int64
	store          string // Params.Store: which specification (memFenceSpec, dbFenceSpec, zkFenceSpec)
}

type storeOut struct {
	accepted bool
	prev     int64 // -1: not recorded (histories from before the store recorded its call)
}

// storeModel is the fenced store's sequential specification (fence),
// partitioned by resource.
var storeModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		idx := map[string]int{}
		var out [][]porcupine.Operation
		for _, op := range h {
			r := op.Input.(storeIn).resource
			i, ok := idx[r]
			if !ok {
				i = len(out)
				idx[r] = i
				out = append(out, nil)
			}
			out[i] = append(out[i], op)
		}
		return out
	},
	Init: func() any { return fenceState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(fenceState), input.(storeIn), output.(storeOut)
		next, ok := storeSpec(in.store)(st, in.mode, in.token, out.accepted)
		return ok && (out.prev < 0 || st.All == out.prev), next
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(storeIn), output.(storeOut)
		return fmt.Sprintf("write(%s, %s, %#x) -> %t (prev %#x)", in.resource, in.mode, in.token, out.accepted, out.prev)
	},
}

// storeSpec returns the specification of the store of kind, as whether a
// verdict fits the state and the state after it.
func storeSpec(kind string) func(st fenceState, mode string, tok int64, accepted bool) (fenceState, bool) {
	switch kind {
	case StoreZK:
		return zkFenceSpec
	case StoreSQLite, StorePostgres:
		return verdictFits(dbFenceSpec)
	}
	return verdictFits(memFenceSpec)
}

// verdictFits turns a specification that decides each verdict into one
// that says whether a given verdict fits.
func verdictFits(spec func(fenceState, string, int64) (fenceState, bool)) func(fenceState, string, int64, bool) (fenceState, bool) {
	return func(st fenceState, mode string, tok int64, accepted bool) (fenceState, bool) {
		next, ok := spec(st, mode, tok)
		return next, ok == accepted
	}
}

// StoreCheck is what porcupine found of the store's history.
type StoreCheck struct {
	Writes int    `json:"writes"`
	Result string `json:"result"` // porcupine's: Ok, Illegal, Unknown (timed out)
}

// checkStoreHistory checks with porcupine that the store's verdicts, each
// placed between when the store was called and when it answered, are
// those of one sequential fenced register per resource. The store in
// memory passes by construction; the check is there so that a store whose
// verdicts come from elsewhere is held to the specification the checker's
// other verdicts rely on. In a database the verdicts are the committed
// rows (accepted) and the fence's refusals, each between the start of its
// transaction and its end (a row whose writer was killed before it said
// so: until its death); a write the database failed otherwise had no
// effect and is left out; the previous token is not recorded. ZooKeeper's
// likewise, judged by zkFenceSpec.
func (c *checker) checkStoreHistory() {
	var ops []porcupine.Operation
	for _, w := range c.writes {
		e := w.Event
		if !e.Accepted && !w.refused() {
			continue
		}
		call, prev := e.Called, e.Max
		if call == 0 || call > e.T {
			call, prev = e.T, -1
		}
		if c.db {
			prev = -1
		}
		ops = append(ops, porcupine.Operation{ClientId: e.Proc, Call: call, Return: e.T,
			Input: storeIn{resource: e.Resource, mode: storeModeOf(e.Mode), token: e.Token, store: c.p.Store}, Output: storeOut{accepted: e.Accepted, prev: prev}})
	}
	c.rep.Store.Writes = len(ops)
	if len(ops) == 0 {
		c.rep.Store.Result = "no writes"
		return
	}
	res := porcupine.CheckOperationsTimeout(storeModel, ops, time.Minute)
	c.rep.Store.Result = string(res)
	if res == porcupine.Illegal {
		c.violation(VStoreHistory, "", fmt.Sprintf("the store's %d verdicts fit no sequential fenced register (porcupine: %s)", len(ops), res), c.lastT, c.lastT)
	}
}

// storeModeOf maps a write's recorded mode to the store's ("" in histories
// from before the recipe lanes: exclusive).
func storeModeOf(mode string) string {
	if mode == "" {
		return ModeExclusive
	}
	return mode
}
