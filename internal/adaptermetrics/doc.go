// Package adaptermetrics creates the one metric the adapters record
// themselves, for package middleware (its Core serves net/http and both
// Echo adapters) and package interceptor: tracing.MetricMisconfigured,
// the requests and calls refused because their lock is misconfigured. The
// names are package tracing's, beside the lock metrics; the adapters use
// the OpenTelemetry API only, never the SDK.
package adaptermetrics
