package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/winnow-search/winnow/cluster/report"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/similarity"
)

// runReport writes the reports of the papers over a corpus or over
// cluster snapshots (the JSON Lines that winnow dedup writes).
func runReport(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("report takes balance, mirrors or evolution")
	}
	switch args[0] {
	case "balance":
		return reportBalance(ctx, e, args[1:])
	case "mirrors":
		return reportMirrors(e, args[1:])
	case "evolution":
		return reportEvolution(e, args[1:])
	}
	return usagef("report %q: want balance, mirrors or evolution", args[0])
}

// reportBalance signs a corpus and prints the load-imbalance factor of
// 1-D, 2-D and 3-D length partitionings (Zhu et al. Fig. 4).
func reportBalance(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("report balance", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	maxParts := fs.Int("max", 64, "largest number of partitions")
	plot := fs.String("plot", "", "also draw the table as a PNG `file`")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow report balance [-max N] [-plot FILE] [INPUT...]   (no INPUT: the embedded sample)")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if err := checkInputs(fs.Args()); err != nil {
		return err
	}
	inputs, sources, tally := openInputs(ctx, e, fs.Args())
	docs, _, err := signInputs(ctx, e, inputs, sources, options.Signer(e.cfg), tally)
	fmt.Fprint(e.stderr, tally.summary())
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %d documents read and signed: %w", errInterrupted, len(docs), context.Cause(ctx))
	}
	if err != nil {
		return err
	}
	sigs := make([]*similarity.Signature, len(docs))
	for i := range docs {
		sigs[i] = &docs[i].sig
	}
	rows := report.Balance(sigs, *maxParts)
	fmt.Fprintf(e.stdout, "%d documents, %d length dimensions signed\n", len(sigs), options.Signer(e.cfg).Signature.LengthDims)
	if err := report.WriteBalance(e.stdout, rows); err != nil {
		return err
	}
	if *plot != "" {
		return report.PlotBalance(rows, *plot)
	}
	return nil
}

// readClusters reads a snapshot of clusters: winnow dedup's JSON Lines,
// one cluster a line, each member by URL (its ID when it has none).
func readClusters(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		var c offline.Line
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		var urls []string
		for _, m := range c.Members {
			urls = append(urls, cmpOrString(m.URL, m.ID))
		}
		out = append(out, urls)
	}
	return out, sc.Err()
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func reportMirrors(e *env, args []string) error {
	fs := flag.NewFlagSet("report mirrors", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	minShared := fs.Int("min", report.DefaultMinShared, "fewest shared clusters of a host pair")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("report mirrors takes one CLUSTERS.jsonl (winnow dedup's output)")
	}
	clusters, err := readClusters(fs.Arg(0))
	if err != nil {
		return err
	}
	return report.WriteMirrors(e.stdout, report.Mirrors(clusters, *minShared))
}

func reportEvolution(e *env, args []string) error {
	fs := flag.NewFlagSet("report evolution", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fetterly := fs.Bool("fetterly-ranges", false, "use Fetterly's cluster-size ranges (1, 2-10, ...)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("report evolution takes BEFORE.jsonl AFTER.jsonl (winnow dedup's outputs)")
	}
	before, err := readClusters(fs.Arg(0))
	if err != nil {
		return err
	}
	after, err := readClusters(fs.Arg(1))
	if err != nil {
		return err
	}
	ranges := report.DefaultRanges()
	if *fetterly {
		ranges = report.FetterlyRanges()
	}
	return report.WriteEvolution(e.stdout, report.EvolutionRanges(before, after, ranges))
}
