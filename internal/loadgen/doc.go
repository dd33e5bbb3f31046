// Package loadgen is an HTTP load generator for benchmarks on loopback: a
// number of connections, each a goroutine, send requests for a duration,
// with every latency recorded in a log-linear histogram ([Histogram])
// precise to under 0.4%.
//
// By default it is closed-loop: a connection sends its next request only
// when the previous answer has arrived, so a stall delays the requests
// behind it instead of counting them late (coordinated omission).
// Latencies are therefore those of the requests sent, as wrk reports them
// without its -R option, and at saturation they are mostly queueing: by
// Little's law, connections / throughput.
//
// With [Options.Rate] it is open-loop, as wrk2 -R: requests fall due at
// fixed intervals whatever the answers, the connections only cap how many
// are in flight, and each latency counts from the time its request was
// due, so a stall shows in every request due during it. Requests that had
// to wait for a connection, or were still waiting when the run ended, are
// counted ([Result.Late], [Result.Missed]). The generator's own delay in
// waking up for a request counts in its latency too ([Result.Lag]).
//
// The generator runs in the calling process: on a small machine it
// competes with the servers it measures for CPU, which lowers every
// throughput it reports by a similar share.
package loadgen
