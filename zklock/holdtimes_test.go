package zklock

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A queue's median is over its last HoldSamples hold times; past
// HoldResources queues, the one released longest ago is forgotten.
func TestHoldTimes(t *testing.T) {
	var h holdTimes
	if m := h.median("/q"); m != 0 {
		t.Fatalf("median with no sample: %v", m)
	}
	for _, ms := range []int{30, 10, 20} {
		h.add("/q", time.Duration(ms)*time.Millisecond)
	}
	if m := h.median("/q"); m != 20*time.Millisecond {
		t.Fatalf("median of 10, 20, 30ms: %v", m)
	}
	for range HoldSamples {
		h.add("/q", time.Second)
	}
	if m := h.median("/q"); m != time.Second {
		t.Fatalf("median after %d samples of 1s: %v; the old ones should be gone", HoldSamples, m)
	}
	for i := range HoldResources {
		h.add(fmt.Sprintf("/r%d", i), time.Millisecond)
	}
	if len(h.rings) != HoldResources || h.median("/q") != 0 || h.median("/r0") == 0 {
		t.Fatalf("%d queues kept, /q's median %v; want %d, /q forgotten", len(h.rings), h.median("/q"), HoldResources)
	}
}

// An owner's deadline and hold median survive the JSON a lock node
// carries; the JSON of an owner without them is what zklock always
// wrote, and foreign data still reads as a label.
func TestOwnerJSON(t *testing.T) {
	d := time.Date(2026, 11, 27, 15, 4, 5, 123456789, time.UTC)
	o := Owner{Host: "box-1", PID: 7, Label: "billing", Deadline: d, HoldMedian: 1250 * time.Millisecond}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"host":"box-1","pid":7,"label":"billing","deadline":"2026-11-27T15:04:05.123Z","hold_p50_seconds":1.25}`; string(b) != want {
		t.Fatalf("JSON %s\nwant %s", b, want)
	}
	got := decodeOwner(b)
	if !got.Deadline.Equal(d.Truncate(time.Millisecond)) || got.HoldMedian != 1250*time.Millisecond || got.Label != "billing" {
		t.Fatalf("decoded %+v", got)
	}
	b, _ = json.Marshal(Owner{Host: "box-1", PID: 7})
	if string(b) != `{"host":"box-1","pid":7}` {
		t.Fatalf("JSON without deadline or hold: %s", b)
	}
	// What an acquire appends to its client's owner record is what
	// MarshalJSON writes.
	for _, o := range []Owner{
		{Host: "box-1", PID: 7, Label: `a "label"`, Deadline: d},
		{Host: "box-1", PID: 7, HoldMedian: 1500 * time.Microsecond},
		{PID: 7, Deadline: d.Truncate(time.Second), HoldMedian: 3*time.Hour + time.Nanosecond},
		{PID: 7, HoldMedian: 300 * time.Nanosecond},
	} {
		base, _ := Owner{Host: o.Host, PID: o.PID, Label: o.Label}.MarshalJSON()
		want, _ := o.MarshalJSON()
		if got := appendWait(base, o.Deadline, o.HoldMedian); string(got) != string(want) {
			t.Errorf("appendWait: %s\nMarshalJSON: %s", got, want)
		}
	}
	if got := decodeOwner([]byte(`{"deadline":"never"}`)); !strings.Contains(got.Label, "never") {
		t.Fatalf("a bad deadline: %+v; want the data as a label", got)
	}
}

// BenchmarkPartData measures what an acquire pays to write its deadline
// and its client's hold-time median into its node.
func BenchmarkPartData(b *testing.B) {
	c := unconnectedClient()
	c.owner, _ = Owner{Host: "box-1", PID: 27461, Label: "billing"}.MarshalJSON()
	c.holds.add("/zklock/r", 300*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	a := &acquisition{ctx: ctx}
	b.ReportAllocs()
	for b.Loop() {
		c.partData(a, "/zklock/r")
	}
}
