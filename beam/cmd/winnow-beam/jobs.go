package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/winnow-search/winnow/beam/pipeline"
)

// runJobs lists the jobs of a job server: what an operator reads to find
// a run whose winnow-beam was killed and whose job still runs.
func runJobs(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("jobs", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "", "the Beam job server's `host:port` (as for winnow-beam dedup)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: winnow-beam jobs -endpoint HOST:PORT\n\n"+
			"Lists the jobs of a Beam job server (Flink's, Spark's): ID, state and name.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("jobs: give -endpoint and nothing else")
	}
	jobs, err := pipeline.Jobs(ctx, *endpoint)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATE\tNAME")
	for _, j := range jobs {
		fmt.Fprintf(w, "%s\t%s\t%s\n", j.ID, j.State, j.Name)
	}
	return w.Flush()
}

// runCancel cancels jobs on a job server by ID or by the name a run gave
// (-job_name, or the one winnow-beam printed as it started).
func runCancel(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cancel", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "", "the Beam job server's `host:port` (as for winnow-beam dedup)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: winnow-beam cancel -endpoint HOST:PORT JOB...\n\n"+
			"Cancels the jobs that have not ended whose ID is JOB, or that a run named JOB (-job_name, or the\n"+
			"name winnow-beam printed as it started): the job server keeps a job running when its winnow-beam\n"+
			"is killed.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" || fs.NArg() == 0 {
		fs.Usage()
		return errors.New("cancel: give -endpoint and at least one job")
	}
	ids, err := pipeline.CancelJobs(ctx, *endpoint, fs.Args())
	for _, id := range ids {
		fmt.Printf("cancelled %s\n", id)
	}
	return err
}
