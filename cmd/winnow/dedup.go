package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// signedDoc is one document after signing; its body is dropped.
type signedDoc struct {
	key, id, url string
	sig          similarity.Signature
	// cut reports a page cut at a size cap (canon's or the signature's).
	cut bool
}

// dedupStats is the summary printed at the end of a run.
type dedupStats struct {
	Docs, Errors, Empty, Cut, Clusters, Duplicates int
	Bytes                                          int64
	Elapsed                                        time.Duration
	Stages                                         stageTimes
}

func runDedup(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("dedup", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	out := fs.String("o", "-", "write clusters as JSON Lines to `file` (- for stdout)")
	backendURL := fs.String("backend", "", "also load the signed pages into the cluster service at `URL` (winnow backend)")
	verbose := fs.Bool("v", false, "print the time of each stage, the pairs reaching each stage of the verification, and the memory held")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow dedup [-o FILE] [INPUT...]\n\n"+
			"INPUT is a directory of .html/.txt files, a .jsonl[.gz] file or a .warc[.gz] file.\n"+
			"With no INPUT, the embedded sample corpus (LLVM documentation of several releases) is used.\n"+
			"Each output line is one cluster: its ID, the winner, and every member with its scores.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	dec, err := decision(e.cfg)
	if err != nil {
		return err
	}
	if t := time.Duration(e.cfg.Dedup.Timeout); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	w := e.stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	var inputs []string
	var sources []iter.Seq2[corpus.Doc, error]
	if fs.NArg() == 0 {
		inputs = []string{"sample"}
		sources = append(sources, sample.Docs())
		fmt.Fprintln(e.stderr, "winnow dedup: no input given, using the embedded sample (LLVM docs of several releases)")
	}
	opts := corpus.Options{MaxFileSize: int64(e.cfg.Dedup.MaxFileBytes)}
	for _, in := range fs.Args() {
		if _, err := os.Stat(in); err != nil {
			return err
		}
		inputs = append(inputs, in)
		sources = append(sources, opts.Open(in))
	}

	start, cpu0 := time.Now(), processCPU()
	docs, stats, err := signInputs(ctx, e, inputs, sources, signer(e.cfg))
	stats.Stages.cpu0, stats.Stages.signWall = cpu0, time.Since(start)
	if err != nil {
		return err
	}
	sigs := make([]*similarity.Signature, len(docs))
	keys := make([]string, len(docs))
	for i := range docs {
		sigs[i], keys[i] = &docs[i].sig, docs[i].key
		stats.Stages.seqTokens += len(docs[i].sig.Seq)
		if docs[i].sig.Empty() {
			stats.Empty++
		}
		if docs[i].cut {
			stats.Cut++
			e.log.Info("dedup_cut", "doc", docs[i].id, "msg", "page over the size cap: only its head is signed")
		}
	}
	if *backendURL != "" {
		statuses, err := ingestDocs(ctx, e, *backendURL, docs)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "winnow dedup: loaded into %s: %v\n", *backendURL, statuses)
	}
	clusters := similarity.BatchCluster(sigs, dec, similarity.BatchOptions{Keys: keys, WinnerVerified: !e.cfg.Dedup.SingleLink,
		Workers: e.cfg.Dedup.Workers, Stats: &stats.Stages.batch})
	writeStart := time.Now()
	bw := bufio.NewWriter(w)
	for _, c := range clusters {
		stats.Clusters++
		stats.Duplicates += len(c.Members) - 1
		if err := writeCluster(bw, c, docs); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	stats.Stages.write = time.Since(writeStart)
	stats.Elapsed = time.Since(start)
	mb := float64(stats.Bytes) / (1 << 20)
	fmt.Fprintf(e.stderr, "winnow dedup: %d documents (%.1f MiB), %d skipped with errors, %d too short to compare, %d cut at the size cap; "+
		"%d clusters holding %d duplicates; %s (%.1f MiB/s, %.0f pages/s, CPU %.0f %%)\n",
		stats.Docs, mb, stats.Errors, stats.Empty, stats.Cut, stats.Clusters, stats.Duplicates,
		stats.Elapsed.Round(time.Millisecond), mb/stats.Elapsed.Seconds(), float64(stats.Docs)/stats.Elapsed.Seconds(), stats.Stages.cpuPercent(stats.Elapsed))
	if *verbose {
		stats.Stages.report(e.stderr, stats.Elapsed)
	}
	return ctx.Err()
}

// signInputs reads every source and signs its documents on all cores. A
// bad document is reported on stderr and skipped; the run goes on.
func signInputs(ctx context.Context, e *env, inputs []string, sources []iter.Seq2[corpus.Doc, error], sg page.Signer) ([]signedDoc, dedupStats, error) {
	var stats dedupStats
	type job struct {
		seq   int
		input int
		doc   corpus.Doc
	}
	type done struct {
		seq int
		doc signedDoc
		err error
	}
	workers := e.cfg.Dedup.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan job, workers*2)
	results := make(chan done, workers*2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				res, err := sg.Sign(j.doc.Body, j.doc.ContentType)
				stats.Stages.add(&res)
				d := signedDoc{id: j.doc.ID, url: j.doc.URL, sig: res.Sig, key: j.doc.ID, cut: res.Doc.Truncated || res.Sig.Capped}
				if len(inputs) > 1 {
					d.key = inputs[j.input] + ":" + j.doc.ID
				}
				if err != nil {
					err = fmt.Errorf("%s: %s: %w", inputs[j.input], j.doc.ID, err)
				}
				results <- done{seq: j.seq, doc: d, err: err}
			}
		})
	}
	// The reader feeds the workers and closes results when they are done.
	go func() {
		defer close(results)
		defer wg.Wait()
		defer close(jobs)
		seq := 0
		for i, src := range sources {
			t := time.Now()
			for doc, err := range src {
				stats.Stages.addRead(time.Since(t))
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					results <- done{seq: -1, err: err}
					continue
				}
				stats.Bytes += int64(len(doc.Body))
				jobs <- job{seq: seq, input: i, doc: doc}
				seq++
				t = time.Now()
			}
		}
	}()

	bar := newBar(e)
	var docs []signedDoc
	var seqs []int
	seen := map[string]int{}
	for r := range results {
		if bar != nil {
			bar.Add(1)
		}
		if r.err != nil {
			stats.Errors++
			e.log.Warn("dedup_skip", "err", r.err)
			continue
		}
		stats.Docs++
		// Keys must be distinct for stable cluster IDs: a repeated ID
		// (e.g. two JSONL lines with one id) gets its occurrence number.
		if n := seen[r.doc.key]; n > 0 {
			r.doc.key = fmt.Sprintf("%s#%d", r.doc.key, n)
		}
		seen[r.doc.key]++
		docs = append(docs, r.doc)
		seqs = append(seqs, r.seq)
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(e.stderr)
	}
	// Workers finish out of order; restore the input order so the output
	// does not depend on scheduling.
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(seqs[a], seqs[b]) })
	sorted := make([]signedDoc, len(docs))
	for i, o := range order {
		sorted[i] = docs[o]
	}
	return sorted, stats, ctx.Err()
}

func newBar(e *env) *progressbar.ProgressBar {
	switch e.cfg.Dedup.Progress {
	case "never":
		return nil
	case "auto":
		if !e.stderrTTY {
			return nil
		}
	}
	return progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription("signing"),
		progressbar.OptionSetItsString("docs"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}

// clusterLine is one line of dedup's output.
type clusterLine struct {
	ID      string       `json:"id"`
	Size    int          `json:"size"`
	Winner  memberLine   `json:"winner"`
	Members []memberLine `json:"members"`
}

type memberLine struct {
	ID       string         `json:"id"`
	URL      string         `json:"url,omitempty"`
	Relation string         `json:"relation,omitempty"`
	Verdict  string         `json:"verdict,omitempty"`
	Explain  string         `json:"explain,omitempty"`
	Scores   map[string]any `json:"scores,omitempty"`
}

func writeCluster(w io.Writer, c similarity.Cluster, docs []signedDoc) error {
	line := clusterLine{ID: fmt.Sprintf("%016x", c.ID), Size: len(c.Members)}
	for i, m := range c.Members {
		d := docs[m.Index]
		ml := memberLine{ID: d.id, URL: d.url}
		if i == 0 {
			line.Winner = ml
			ml.Relation = "winner"
		} else {
			ml.Relation = m.Verdict.Relation.String()
			ml.Verdict = m.Verdict.String()
			ml.Explain = m.Verdict.Explain()
			ml.Scores = scoresMap(&m.Verdict.Scores)
		}
		line.Members = append(line.Members, ml)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // explanations hold "<=" and ">="
	return enc.Encode(line)
}
