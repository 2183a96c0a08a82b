// Package flight is the flight recorder of package zklock: it keeps Go's
// runtime flight recorder (runtime/trace.FlightRecorder) running and,
// when a lease is lost, writes the trace window and a JSON account of the
// clients' recent wire history (wire.History) and of the losses to a
// directory, rate-limited, in the background. Package zklock tells it of
// each loss (Recorder.Lost) and says what each client knows of its
// session (Source); the recorder never calls back into a loss.
package flight
