// Package adaptertest holds what the tests and benchmarks of the adapters
// (package middleware and its Echo adapters, package interceptor) share:
// a recorder of what they log, a reader of the metric they record, and
// the harness of their overhead benchmarks.
package adaptertest
