// Package duration parses the durations written in zklock's connection
// strings, zklockgen's directives and the zklock command's flags (Var),
// with messages that say what was expected: a bare number is answered
// with the unit it most likely lacks ("5" → 5s, "250" → 250ms), a
// misspelled unit with the right one ("5sec" → 5s, "2d" → 48h).
//
// It accepts exactly what time.ParseDuration accepts; only the errors
// differ.
package duration
