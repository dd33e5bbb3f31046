// Command winnow removes or groups near-duplicate pages: in search results
// (the proxy, later), in a whole index (the cluster service, later) and in
// a crawl or a folder of pages (the offline job).
//
// Usage:
//
//	winnow [global flags] <command> [flags] [args]
//
// Commands:
//
//	serve    the refinement proxy in front of search engines (no config:
//	         in front of an embedded demo engine on loopback)
//	cluster  the cluster service: incremental groups for a whole index
//	dedup    cluster near-duplicates in folders, JSONL or WARC files
//	         (no argument: the embedded sample corpus)
//	index    tag the near-duplicate groups of an Elasticsearch, OpenSearch or Solr index
//	sig      print the signature of one page
//	compare  explain whether two pages are near-duplicates, and why
//	eval     precision, recall and F1 on a labelled data set
//	report   partition balance (Zhu), mirrors and cluster evolution (Fetterly)
//
// Global flags:
//
//	-config FILE   YAML configuration (see package config)
//	-set KEY=VAL   override one configuration key, e.g. decision.method=simhash
//	-v             debug logging
//	-cpuprofile F  write a CPU profile of the command to F
//	-memprofile F  write a heap profile to F when the command ends
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/options"
)

// env carries what every command needs from the process: its streams, its
// configuration and its logger. Commands never read os.Args or the
// environment themselves.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	cfg            config.Config
	log            *slog.Logger
	// stderrTTY reports whether stderr is a terminal (for progress bars).
	stderrTTY bool
}

type command struct {
	name, summary string
	run           func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the refinement proxy (no config: in front of an embedded demo engine)", runServe},
		{"cluster", "run the cluster service (incremental near-duplicate groups of a whole index)", runClusterService},
		{"dedup", "cluster near-duplicates in folders, JSONL or WARC files (no argument: the embedded sample)", runDedup},
		{"index", "group the near-duplicates of an Elasticsearch, OpenSearch or Solr index and tag its documents (dry run unless -apply)", runIndex},
		{"sig", "print the signature of one page (a file, or - for stdin)", runSig},
		{"compare", "explain whether two pages are near-duplicates, and why", runCompare},
		{"eval", "precision, recall and F1 on a labelled data set", runEval},
		{"calibrate", "fit the group or remove decision to a site's labelled pairs or search-page feedback; writes the YAML -config reads", runCalibrate},
		{"report", "partition balance of a corpus; mirrors and cluster evolution from dedup outputs", runReport},
		{"bench", "measure the proxy against a plain fasthttp pass-through on loopback (latency, throughput, CPU, memory)", runBench},
	}
}

// renamedCommands maps a command's former name to its name; the former
// still runs, with a warning.
var renamedCommands = map[string]string{"backend": "cluster"}

// errUsage marks an error whose message is a usage problem (exit code 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels ctx and the command winds down; a second
	// one kills the process as the default action does.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("winnow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML configuration `file`")
	var sets stringList
	fs.Var(&sets, "set", "override a configuration `key=value` (repeatable)")
	verbose := fs.Bool("v", false, "debug logging")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the command to `file`")
	memprofile := fs.String("memprofile", "", "write a heap profile to `file` when the command ends")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: winnow [-config FILE] [-set KEY=VALUE]... [-v] <command> [args]\n\ncommands:")
		for _, c := range commands() {
			fmt.Fprintf(stderr, "  %-8s %s\n", c.name, c.summary)
		}
		fmt.Fprintln(stderr, "\nglobal flags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)

	cfg, err := config.Load(*cfgPath, environ, sets)
	if err == nil {
		// The keys a library checks (decisions, engine kinds) are
		// checked here too, so a bad one is a configuration error of
		// every command, as config's own are.
		err = options.Check(cfg)
	}
	if err != nil {
		fmt.Fprintln(stderr, "winnow:", err)
		return 2
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, cfg: cfg, log: logger, stderrTTY: isTerminal(stderr)}
	for _, cal := range []struct {
		purpose string
		c       config.Calibrated
	}{{"group", cfg.Decision.Calibration.Group}, {"remove", cfg.Decision.Calibration.Remove}} {
		// A calibration whose cross-validated precision did not hold its
		// target is applied as configured, and said at every start.
		if cal.c.Set() && !cal.c.HoldsTarget {
			logger.Warn("calibration_not_holding", "purpose", cal.purpose, "source", cal.c.Source,
				"precision", cal.c.Precision, "target", cal.c.TargetPrecision)
		}
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(stderr, "winnow:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "winnow:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				err = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(stderr, "winnow: heap profile:", err)
			}
		}()
	}
	name := fs.Arg(0)
	if current, ok := renamedCommands[name]; ok {
		logger.Warn("deprecated command name", "name", name, "use", current)
		name = current
	}
	for _, note := range cfg.Deprecated {
		logger.Warn("deprecated configuration name", "change", note)
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, e, fs.Args()[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "winnow %s: %v\n", name, err)
			return 2
		case errors.Is(err, errInterrupted):
			fmt.Fprintf(stderr, "winnow %s: %v\n", name, err)
			return 130
		case errors.As(err, new(exitError)):
			var x exitError
			errors.As(err, &x)
			if x.err != nil {
				fmt.Fprintf(stderr, "winnow %s: %v\n", name, x.err)
			}
			return x.code
		default:
			fmt.Fprintf(stderr, "winnow %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "winnow: unknown command %q\n", name)
	fs.Usage()
	return 2
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// exitError ends a command with its own exit status (compare's 1 for
// "not a duplicate"); err, when set, is printed as any error is.
type exitError struct {
	code int
	err  error
}

func (x exitError) Error() string {
	if x.err == nil {
		return fmt.Sprintf("exit status %d", x.code)
	}
	return x.err.Error()
}

func (x exitError) Unwrap() error { return x.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}
