package main

import (
	"errors"
	"flag"
	"fmt"
	"syscall"
)

// parseArgs parses a command's flags wherever they stand among its
// arguments, as `winnow dedup in.jsonl -o out.jsonl` is typed, so a flag
// after an input is never read as a file name; `--` ends the flags (for
// an input whose name starts with "-"), and a lone "-" (standard input) is
// an argument. Afterwards fs.Args() holds the arguments in their order.
func parseArgs(fs *flag.FlagSet, args []string) error {
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		left := fs.Args()
		// The flag package drops a terminating "--": every argument after
		// it is an argument, flag-like or not.
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			rest = append(rest, left...)
			break
		}
		if len(left) == 0 {
			break
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
	// Parse once more with only the arguments, behind a terminator, so
	// fs.Args() is exactly them; flags already set keep their values.
	return fs.Parse(append([]string{"--"}, rest...))
}

// listenError says what to do when a command's listen address is taken:
// the busy default port is the first thing a new user meets when another
// service (or a second winnow) already runs.
func listenError(err error, addr, key string) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use by another program: choose another address with -listen 127.0.0.1:PORT (or -set %s=ADDR; port 0 picks a free one)", addr, key)
	}
	return err
}
