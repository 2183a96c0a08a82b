package zklock

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/wire"
)

// The figures docs/operations.md quotes for the flight recorder and the
// hold-time reports are the code's.
func TestFlightAndEstimateDocFacts(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		fmt.Sprintf("%d KiB (`wire.HistoryBytes`)", (wire.HistoryBytes+512)/1024),
		fmt.Sprintf("%d pings and syncs", wire.HistoryBeats),
		fmt.Sprintf("%d other requests and %d marks", wire.HistoryTrips, wire.HistoryMarks),
		fmt.Sprintf("in the background %d ms later", flightSettle.Milliseconds()),
		fmt.Sprintf("The trace window is %d s long (`FlightWindow`", int(DefaultFlightWindow.Seconds())),
		fmt.Sprintf("at most %d MiB (`FlightMaxBytes`", DefaultFlightMaxBytes>>20),
		fmt.Sprintf("keeps the newest %d recordings (`FlightKeep`)", DefaultFlightKeep),
		fmt.Sprintf("over its last %d released leases of it (`zklock.HoldSamples`", HoldSamples),
		fmt.Sprintf("for %d resources (`zklock.HoldResources`)", HoldResources),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/operations.md does not say %q", want)
		}
	}
	if DefaultFlightEvery != time.Minute || !strings.Contains(doc, "At most one recording is begun a minute (`FlightEvery`)") {
		t.Errorf("the rate limit is %v; docs/operations.md says one a minute", DefaultFlightEvery)
	}
}
