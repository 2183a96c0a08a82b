package chaos_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// Check judges a history: here a holder paused past its session timeout
// is overtaken, and its late write is refused by the fenced store.
func ExampleCheck() {
	ms := func(n int64) int64 { return 1_700_000_000_000_000_000 + n*int64(time.Millisecond) }
	history := []chaos.Event{
		{Seq: 1, Kind: chaos.EvAcquired, T: ms(0), Proc: 1, Op: 1, Resource: "a", Token: 10},
		{Seq: 2, Kind: chaos.EvWrite, T: ms(1), Proc: 1, Op: 1, Resource: "a", Token: 10, Accepted: true},
		{Seq: 3, Kind: chaos.EvFault, T: ms(5), Fault: "pause", FaultID: 1, Proc: 1},
		{Seq: 4, Kind: chaos.EvAcquired, T: ms(3500), Proc: 2, Op: 1, Resource: "a", Token: 20},
		{Seq: 5, Kind: chaos.EvWrite, T: ms(3501), Proc: 2, Op: 1, Resource: "a", Token: 20, Accepted: true},
		{Seq: 6, Kind: chaos.EvRelease, T: ms(3600), Proc: 2, Op: 1, Resource: "a"},
		{Seq: 7, Kind: chaos.EvHeal, T: ms(5000), FaultID: 1},
		{Seq: 8, Kind: chaos.EvWrite, T: ms(5001), Sent: ms(5001), Proc: 1, Op: 1, Resource: "a", Token: 10, Max: 20},
		{Seq: 9, Kind: chaos.EvLost, T: ms(5002), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`},
	}
	r := chaos.Check(history, chaos.Params{SessionTimeout: 3 * time.Second, HangGrace: 2 * time.Second})
	fmt.Println("acquisitions:", r.Acquisitions)
	fmt.Println("stale writes rejected (paused):", r.Stale.RejectedPaused)
	fmt.Println("paused holders overtaken:", r.PausedOverlaps)
	fmt.Println("violations:", len(r.Violations))
	// Output:
	// acquisitions: 2
	// stale writes rejected (paused): 1
	// paused holders overtaken: 1
	// violations: 0
}

// With the store in a database, the committed rows read back after the
// run decide what was accepted: here a paused holder's late write was
// refused by the fence (fence.Guard), so only the next holder's row is in
// the store.
func ExampleCheck_database() {
	ms := func(n int64) int64 { return 1_700_000_000_000_000_000 + n*int64(time.Millisecond) }
	history := []chaos.Event{
		{Seq: 1, Kind: chaos.EvAcquired, T: ms(0), Proc: 1, Op: 1, Resource: "a", Token: 10},
		{Seq: 2, Kind: chaos.EvFault, T: ms(5), Fault: "pause", FaultID: 1, Proc: 1},
		{Seq: 3, Kind: chaos.EvAcquired, T: ms(3500), Proc: 2, Op: 1, Resource: "a", Token: 20},
		{Seq: 4, Kind: chaos.EvWrite, T: ms(3502), Called: ms(3501), Sent: ms(3501), Proc: 2, Op: 1, Resource: "a", Mode: chaos.ModeExclusive,
			Token: 20, WriteID: 2<<32 | 1, Outcome: chaos.WriteCommitted, Accepted: true},
		{Seq: 5, Kind: chaos.EvRelease, T: ms(3600), Proc: 2, Op: 1, Resource: "a"},
		{Seq: 6, Kind: chaos.EvHeal, T: ms(5000), FaultID: 1},
		{Seq: 7, Kind: chaos.EvWrite, T: ms(5002), Called: ms(5001), Sent: ms(5001), Proc: 1, Op: 1, Resource: "a", Mode: chaos.ModeExclusive,
			Token: 10, WriteID: 1<<32 | 1, Outcome: chaos.WriteStale, Max: 20},
		{Seq: 8, Kind: chaos.EvLost, T: ms(5003), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`},
		// Read back after the run: the one committed row of "a".
		{Seq: 9, Kind: chaos.EvCommitted, T: ms(9000), Proc: 2, Op: 1, Resource: "a", Mode: chaos.ModeExclusive, Token: 20, Sent: ms(3501),
			WriteID: 2<<32 | 1, Order: 1},
		{Seq: 10, Kind: chaos.EvNote, T: ms(9001), Outcome: chaos.NoteStoreRead},
	}
	r := chaos.Check(history, chaos.Params{SessionTimeout: 3 * time.Second, HangGrace: 2 * time.Second, Store: chaos.StorePostgres})
	fmt.Println("rows committed:", r.Database.Rows)
	fmt.Println("stale writes refused by the database (paused):", r.Stale.RejectedPaused)
	fmt.Println("stale writes committed:", r.Stale.Committed)
	fmt.Println("violations:", len(r.Violations))
	// Output:
	// rows committed: 1
	// stale writes refused by the database (paused): 1
	// stale writes committed: 0
	// violations: 0
}

// Run runs a whole campaign. The campaign re-executes its own binary for
// its workers, so main (or TestMain) calls RunWorkerIfChild first.
func ExampleRun() {
	chaos.RunWorkerIfChild()
	cfg := chaos.Short()
	cfg.Progress = os.Stderr
	rep, err := chaos.Run(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	rep.WriteTable(os.Stdout)
	rep.WriteViolations(os.Stdout)
	if !rep.Pass {
		os.Exit(1)
	}
}
