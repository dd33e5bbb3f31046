//go:build !unix

package enginetest

import "testing"

// holdJobServer does nothing where there is no flock: the tests of one
// package at a time (go test -p 1) then keep to one pipeline a job server.
func holdJobServer(t *testing.T, kind string) {}
