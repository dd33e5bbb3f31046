// Package bench measures winnow's proxy against a plain fasthttp
// pass-through in front of the same embedded demo engine, all in one
// process on loopback, with warm signatures: throughput, latency
// quantiles, CPU per request and resident memory, then optionally a soak
// that reports whether memory grows. [Run] is the harness behind
// `winnow bench`; it reads the proxy's counters through
// [proxy.Server.Stats], never by scraping its /metrics text.
package bench
