package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
)

// indexUsage is the head of winnow index's usage, before its flags.
const indexUsage = "usage: winnow index [-apply] [-o REPORT.json] [-since FIELD:VALUE] [flags] URL\n\n" +
	"Groups the near-duplicates of a search engine's index as winnow dedup groups JSON Lines records, and tags\n" +
	"every document with its group. URL names the engine and index:\n" +
	"  http://HOST:9200/INDEX          Elasticsearch or OpenSearch (told apart by the engine's answers; or -kind)\n" +
	"  http://HOST:8983/solr/CORE      Solr\n" +
	"Without -apply it is a dry run: it prints what it would write and writes nothing.\n" +
	"With -apply it adds to the mapping (Solr: the schema) and writes to each document:\n" +
	"  winnow_group        keyword  the cluster ID (16 hex digits, as winnow dedup's), singletons included\n" +
	"  winnow_winner       boolean  the group's winner (by dedup.winner.rules)\n" +
	"  winnow_removable    boolean  the content-equivalence decision accepts it against its winner\n" +
	"  winnow_probability  float    the group decision's probability against the winner (1 for a winner)\n" +
	"Writes are conditional on the version read: a document changed meanwhile is re-read, never overwritten.\n" +
	"The checkpoint file lets a stopped -apply (Ctrl-C, kill -9) resume where it stopped: run the same command again.\n" +
	"Stored fields read as the page (each a list tried in order, as dedup.fields.*): -id, -url, -html, -text, -popularity;\n" +
	"a document without text or HTML is fetched from its URL with -fetch (serve.fetch.*, SSRF guard on).\n" +
	"Exit status: 0 when the index was read (failed writes are counted by reason in the summary), 1 when it could not be\n" +
	"read, its mapping (schema) could not take the fields, or the run was stopped, 2 for a usage error."

func runIndex(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	kind := fs.String("kind", "", "the engine: elasticsearch, opensearch or solr (default: detected)")
	apply := fs.Bool("apply", false, "write the tags (default: a dry run that writes nothing)")
	out := fs.String("o", "", "write the report as JSON to `file` (- for stdout)")
	since := fs.String("since", "", "incremental: compare only documents whose `FIELD:VALUE` is greater (a timestamp or sequence number field) with the existing groups' winners")
	checkpoint := fs.String("checkpoint", "", "the checkpoint `file` of -apply (default winnow-index-INDEX.checkpoint; none: no checkpoint)")
	rate := fs.Float64("rate", 0, "write at most `N` documents a second (0: unbounded)")
	batch := fs.Int("batch", 0, "documents a write request (default 500)")
	slices := fs.Int("slices", 0, "parallel read slices on Elasticsearch and OpenSearch (default: the CPUs; 1 under 1,000 documents)")
	retryFor := fs.Duration("retry-for", indextag.DefaultRetryFor, "retry an engine's back-pressure (429, 503) this long before giving up a request")
	doFetch := fs.Bool("fetch", false, "fetch the URL of a document that has no text or HTML field (serve.fetch.*; SSRF guard on)")
	var fields struct{ id, url, html, text, popularity string }
	fs.StringVar(&fields.id, "id", "", "stored field(s) of the document ID written to the report, comma-separated (default dedup.fields.id; the key is always _id)")
	fs.StringVar(&fields.url, "url", "", "stored field(s) of the page URL (default dedup.fields.url)")
	fs.StringVar(&fields.html, "html", "", "stored field(s) of the page HTML (default dedup.fields.html)")
	fs.StringVar(&fields.text, "text", "", "stored field(s) of the page text (default dedup.fields.text)")
	fs.StringVar(&fields.popularity, "popularity", "", "stored field(s) of the popularity score (default dedup.fields.popularity)")
	fs.Usage = func() { fmt.Fprintln(e.stderr, indexUsage); fs.PrintDefaults() }
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("index: want one URL naming an index, got %d arguments", fs.NArg())
	}
	target, err := indextag.ParseTarget(fs.Arg(0), *kind)
	if err != nil {
		return usagef("index: %v", err)
	}
	c := e.cfg
	for _, f := range []struct {
		flag string
		dst  *[]string
	}{{fields.id, &c.Dedup.Fields.ID}, {fields.url, &c.Dedup.Fields.URL}, {fields.html, &c.Dedup.Fields.HTML}, {fields.text, &c.Dedup.Fields.Text}, {fields.popularity, &c.Dedup.Fields.Popularity}} {
		if f.flag != "" {
			*f.dst = strings.Split(f.flag, ",")
		}
	}
	o, err := options.Index(c, target, e.log)
	if err != nil {
		return err
	}
	o.Apply, o.Rate, o.Batch, o.Slices, o.RetryFor = *apply, *rate, *batch, *slices, *retryFor
	if *since != "" {
		if o.Since, err = indextag.ParseSince(*since); err != nil {
			return usagef("index: %v", err)
		}
	}
	if *rate < 0 || *batch < 0 || *slices < 0 {
		return usagef("index: -rate, -batch and -slices must not be negative")
	}
	if *apply {
		switch *checkpoint {
		case "":
			o.Checkpoint = "winnow-index-" + target.Index + ".checkpoint"
		case "none":
		default:
			o.Checkpoint = *checkpoint
		}
	}
	if *doFetch {
		po, err := options.Proxy(c, e.log)
		if err != nil {
			return err
		}
		fc, err := fetch.New(po.Fetch)
		if err != nil {
			return err
		}
		defer fc.Close()
		o.Fetch = fc
	}
	o.Fingerprint = indexFingerprint(c, *doFetch)
	if t := time.Duration(c.Dedup.Timeout); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	bars := newIndexBars(e)
	o.Progress = bars.add

	cpu0 := processCPU()
	rep, runErr := indextag.Run(ctx, o)
	bars.finish()
	cpu := processCPU() - cpu0
	if errors.Is(runErr, indextag.ErrRead) && (rep == nil || rep.Docs == 0) {
		// Nothing was read (a missing index, a wrong URL): the error
		// alone, not a report of zeros before it.
		return runErr
	}
	printIndexReport(e.stderr, rep, cpu)
	if *out != "" {
		if err := writeIndexReport(e, *out, rep); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil && o.Checkpoint != "" && !errors.Is(runErr, indextag.ErrRead) {
		fmt.Fprintf(e.stderr, "winnow index: stopped; the checkpoint %s resumes the run: give the same command again\n", o.Checkpoint)
	}
	return runErr
}

// indexFingerprint identifies the settings that decide the groups, so that
// a checkpoint is not resumed under others.
func indexFingerprint(c config.Config, fetch bool) string {
	b, _ := json.Marshal([]any{c.Canon, c.Signature, c.Decision, c.Dedup.Fields, c.Dedup.Winner, c.Dedup.SingleLink, c.Cluster.MarketTLDs, fetch})
	return fmt.Sprintf("%x", sha256.Sum256(b))[:16]
}

// writeIndexReport writes rep as indented JSON to path (- for stdout).
func writeIndexReport(e *env, path string, rep *indextag.Report) error {
	w := e.stdout
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// printIndexReport prints what the run found and wrote (or would write),
// then the summary line.
func printIndexReport(w io.Writer, r *indextag.Report, cpu time.Duration) {
	if r == nil {
		return
	}
	verb := "would write"
	if r.Applied {
		verb = "wrote"
	}
	fmt.Fprintf(w, "winnow index: %s %s at %s, read by %s\n", r.Kind, r.Index, r.Engine, orNone(r.Read))
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "winnow index: %d documents not compared: %s\n", sum(r.Skipped), offline.FormatCounts(r.Skipped))
	}
	fmt.Fprintf(w, "winnow index: %d clusters holding %d duplicates (%d removable); %d documents alone\n", r.Clusters, r.Duplicates, r.Removable, r.Singletons)
	if r.Incremental {
		fmt.Fprintf(w, "winnow index: incremental: %d new documents joined existing groups; %d groups got a new winner\n", r.Assigned, r.Replaced)
	}
	if len(r.Largest) > 0 {
		fmt.Fprintln(w, "winnow index: largest groups:")
		for _, g := range r.Largest {
			fmt.Fprintf(w, "  %s  %3d documents, %3d removable, winner %s %s (%s)\n", g.ID, g.Size, g.Removable, g.Winner, g.WinnerURL, orNone(g.WinnerRule))
		}
	}
	if len(r.Sample) > 0 {
		fmt.Fprintln(w, "winnow index: sample of duplicates:")
		for _, s := range r.Sample {
			fmt.Fprintf(w, "  %s in %s (winner %s), removable %v\n    group:  %s\n", s.ID, s.Group, s.Winner, s.Removable, s.Explain)
			if s.RemoveExplain != "" {
				fmt.Fprintf(w, "    remove: %s\n", s.RemoveExplain)
			}
		}
	}
	wr := r.Writes
	if r.Applied {
		fmt.Fprintf(w, "winnow index: %s %d documents; %d already tagged, %d by the run resumed, %d re-read after a change (%d decided again), %d deleted meanwhile",
			verb, wr.Written, wr.Unchanged, wr.Resumed, wr.Reread, wr.Changed, wr.Missing)
	} else {
		fmt.Fprintf(w, "winnow index: %s %d documents; %d already carry their tags", verb, wr.Planned, wr.Unchanged)
	}
	if len(wr.Failed) > 0 {
		fmt.Fprintf(w, "; failed %d: %s", sum(wr.Failed), offline.FormatCounts(wr.Failed))
	}
	if len(wr.Retries) > 0 {
		fmt.Fprintf(w, "; retried: %s", offline.FormatCounts(wr.Retries))
	}
	fmt.Fprintln(w)
	secs := r.Elapsed.Seconds()
	mb := float64(r.Bytes) / (1 << 20)
	cpuPct := 0.0
	if secs > 0 {
		cpuPct = 100 * cpu.Seconds() / secs
	}
	fmt.Fprintf(w, "winnow index: %d documents (%.1f MiB), %d too short to compare, %d cut at the size cap; %s (%.1f MiB/s, %.0f pages/s, CPU %.0f %%)\n",
		r.Docs, mb, r.Empty, r.Cut, r.Elapsed.Round(time.Millisecond), mb/max(secs, 1e-9), float64(r.Docs)/max(secs, 1e-9), cpuPct)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// indexBars shows a progress bar per stage on a terminal.
type indexBars struct {
	e     *env
	stage string
	bar   *progressbar.ProgressBar
}

func newIndexBars(e *env) *indexBars { return &indexBars{e: e} }

func (b *indexBars) add(stage string, n int) {
	if b.stage != stage {
		b.finish()
		b.stage = stage
		if bar := newBar(b.e); bar != nil {
			bar.Describe(stage)
			b.bar = bar
		}
	}
	if b.bar != nil {
		b.bar.Add(n)
	}
}

func (b *indexBars) finish() {
	if b.bar != nil {
		b.bar.Finish()
		fmt.Fprintln(b.e.stderr)
		b.bar = nil
	}
}
