// Package loadgen is a closed-loop HTTP load generator for benchmarks on
// loopback: a number of connections, each a goroutine that sends requests
// back to back for a duration, with every latency recorded in a
// log-linear histogram ([Histogram]) precise to under 0.4%.
//
// It is closed-loop: a connection sends its next request only when the
// previous answer has arrived, so a stall delays the requests behind it
// instead of counting them late (coordinated omission). Latencies are
// therefore those of the requests sent, as wrk reports them without its
// -R option.
//
// The generator runs in the calling process: on a small machine it
// competes with the servers it measures for CPU, which lowers every
// throughput it reports by a similar share.
package loadgen
