//go:build race

package proxy

// raceEnabled reports that the race detector is on: it slows the code
// five to ten times, so tests of time budgets do not hold.
const raceEnabled = true
