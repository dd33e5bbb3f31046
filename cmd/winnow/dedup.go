package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// signedDoc is one document after signing; its body is dropped.
type signedDoc struct {
	key, id, url string
	// input is the input as given when the job reads several, else "".
	input      string
	popularity float64 // from the input, for the winner rules; 0 if none
	sig        similarity.Signature
	// cut reports a page cut at a size cap (canon's or the signature's).
	cut bool
}

// dedupStats is the summary printed at the end of a run.
type dedupStats struct {
	Docs, Errors, Empty, Cut, Clusters, Duplicates, Removable int
	Bytes                                                     int64
	Elapsed                                                   time.Duration
	Stages                                                    stageTimes
}

// dedupUsage is the head of winnow dedup's usage, before its flags.
const dedupUsage = "usage: winnow dedup [-o FILE] [-cluster URL] [INPUT...]\n\n" +
	"INPUT is a directory of .html/.txt files, a .jsonl, .ndjson or .json file (JSON Lines; also\n" +
	"gzip, zstd or bzip2 compressed: .gz, .zst, .bz2), a .parquet file or a .warc[.gz] file (or Common Crawl's .warc.wet.gz).\n" +
	"With no INPUT, the embedded sample corpus (LLVM documentation of several releases) is used, under the URLs\n" +
	"the demo engine of winnow serve gives it (serve.demo_listen).\n" +
	"Each output line is one cluster: its ID, the winner, the winner rule that elected it, and every member with its scores.\n\n" +
	"WARC: response records with status 200 and an HTML or text payload, resource and conversion (WET) records of\n" +
	"http(s) URLs and revisits resolved to their target are pages; other records are skipped and counted by kind.\n" +
	"JSONL and Parquet fields (each a list tried in order; set with -set dedup.fields.text=a,b):\n" +
	"  id          dedup.fields.id          default: id (string or number; else the line number)\n" +
	"  url         dedup.fields.url         default: url\n" +
	"  html        dedup.fields.html        default: html\n" +
	"  text        dedup.fields.text        default: text, content, raw_content, body (HTML if it starts with <!doctype html or <html)\n" +
	"  popularity  dedup.fields.popularity  default: popularity (a number)\n" +
	"Winner rules (dedup.winner.rules, in order; the URL decides last): popularity, https, shorter, static, market\n" +
	"(dedup.winner.market_tlds, default cluster.market_tlds)."

func runDedup(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("dedup", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	out := fs.String("o", "-", "write clusters as JSON Lines to `file` (- for stdout)")
	clusterURL := fs.String("cluster", "", "also load the signed pages into the cluster service at `URL` (winnow cluster)")
	fs.StringVar(clusterURL, "backend", "", "former name of -cluster (deprecated)")
	verbose := fs.Bool("v", false, "print the time of each stage, the pairs reaching each stage of the verification, and the memory held")
	fs.Usage = func() { fmt.Fprintln(e.stderr, dedupUsage); fs.PrintDefaults() }
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	dec, err := options.Decision(e.cfg)
	if err != nil {
		return err
	}
	if err := checkInputs(fs.Args()); err != nil {
		return err
	}
	if t := time.Duration(e.cfg.Dedup.Timeout); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	w := e.stdout
	var outFile *atomicFile
	if *out != "-" {
		if outFile, err = createAtomic(*out); err != nil {
			return err
		}
		defer outFile.abort()
		w = outFile
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(e.stderr, "winnow dedup: no input given, using the embedded sample (LLVM docs of several releases)")
	}
	inputs, sources, report := openInputs(ctx, e, fs.Args())

	start, cpu0 := time.Now(), processCPU()
	docs, stats, err := signInputs(ctx, e, inputs, sources, options.BatchSigner(e.cfg), report)
	stats.Stages.cpu0, stats.Stages.signWall = cpu0, time.Since(start)
	fmt.Fprint(e.stderr, report.summary())
	if ctx.Err() != nil {
		return interrupted(ctx, e, "reading and signing", *out, stats, start)
	}
	if err != nil {
		return err
	}
	if err := report.err(); err != nil {
		return err
	}
	rank, err := options.Winners(e.cfg)
	if err != nil {
		return err
	}
	sigs, lineDocs, keys := docTables(e, docs, rank, &stats)
	if *clusterURL != "" {
		loaded, err := ingestDocs(ctx, e, *clusterURL, docs)
		if err != nil || ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "winnow dedup: loaded into %s before it stopped: %s\n", *clusterURL, cmp.Or(offline.FormatCounts(loaded.Statuses), "nothing"))
		}
		if ctx.Err() != nil {
			return interrupted(ctx, e, "loading into the cluster service", *out, stats, start)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "winnow dedup: loaded into %s: %s; not loaded: %s\n", *clusterURL, offline.FormatCounts(loaded.Statuses), cmp.Or(offline.FormatCounts(loaded.Skipped), "none"))
	}
	clusters, ok := untilDone(ctx, func() []similarity.Cluster {
		return similarity.BatchCluster(sigs, dec, similarity.BatchOptions{Keys: keys, WinnerVerified: !e.cfg.Dedup.SingleLink,
			Workers: e.cfg.Dedup.Workers, Stats: &stats.Stages.batch})
	})
	if !ok {
		return interrupted(ctx, e, "clustering", *out, stats, start)
	}
	_, remove, _ := options.Decisions(e.cfg) // checked by decision above
	writeStart := time.Now()
	if err := writeClusters(ctx, w, clusters, lineDocs, sigs, rank, remove, &stats); err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, e, "writing", *out, stats, start)
		}
		return err
	}
	if outFile != nil {
		if err := outFile.commit(); err != nil {
			return err
		}
	}
	stats.Stages.write = time.Since(writeStart)
	stats.Elapsed = time.Since(start)
	mb := float64(stats.Bytes) / (1 << 20)
	fmt.Fprintf(e.stderr, "winnow dedup: %d documents (%.1f MiB), %d skipped with errors, %d too short to compare, %d cut at the size cap; "+
		"%d clusters holding %d duplicates; %s (%.1f MiB/s, %.0f pages/s, CPU %.0f %%)\n",
		stats.Docs, mb, stats.Errors, stats.Empty, stats.Cut, stats.Clusters, stats.Duplicates,
		stats.Elapsed.Round(time.Millisecond), mb/stats.Elapsed.Seconds(), float64(stats.Docs)/stats.Elapsed.Seconds(), stats.Stages.cpuPercent(stats.Elapsed))
	fmt.Fprint(e.stderr, nextSteps(stats, *out))
	if *verbose {
		stats.Stages.report(e.stderr, stats.Elapsed)
	}
	return nil
}

// nextSteps says what the duplicates found mean and what an operator does
// with them: how many may be deleted (the remove decision accepts them
// against their winner) and how many stay grouped, and where to read them.
func nextSteps(stats dedupStats, out string) string {
	if stats.Duplicates == 0 {
		return "winnow dedup: no near-duplicates: nothing to remove or group.\n"
	}
	where := "the output"
	if out != "" && out != "-" {
		where = out
	}
	return fmt.Sprintf("winnow dedup: %d of the %d duplicates are removable (the content-equivalence decision accepts them against their winner: "+
		"candidates to delete or drop from an index; a page whose words match but whose prices, counts or versions differ is never among them); "+
		"the other %d are near-duplicates to keep grouped under their winner. In %s, members with \"removable\": true are the candidates; "+
		"winnow compare explains any pair (a folder's page is its input's path joined with its id).\n",
		stats.Removable, stats.Duplicates, stats.Duplicates-stats.Removable, where)
}

// errInterrupted is wrapped by the error of a command stopped by SIGINT or
// SIGTERM (or dedup.timeout): the process exits with status 130.
var errInterrupted = errors.New("interrupted")

// interrupted prints what dedup did before ctx ended it, in stage, and
// returns the error that ends the command. No output file is left at out.
func interrupted(ctx context.Context, e *env, stage, out string, stats dedupStats, start time.Time) error {
	where := out + " not written"
	switch {
	case out == "-" && stats.Clusters > 0:
		where = fmt.Sprintf("%d clusters written to stdout, an incomplete output", stats.Clusters)
	case out == "-":
		where = "nothing written to stdout"
	}
	fmt.Fprintf(e.stderr, "winnow dedup: stopped while %s after %s: %d documents (%.1f MiB) read and signed, %d skipped with errors; %s\n",
		stage, time.Since(start).Round(time.Millisecond), stats.Docs, float64(stats.Bytes)/(1<<20), stats.Errors, where)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: dedup.timeout %s reached", errInterrupted, time.Duration(e.cfg.Dedup.Timeout))
	}
	return fmt.Errorf("%w: %w", errInterrupted, context.Cause(ctx))
}

// untilDone runs f in a goroutine and returns its result, or false as
// soon as ctx is done. An abandoned f runs on to its end in the
// background (the process exits before then): the clustering takes no
// context.
func untilDone[T any](ctx context.Context, f func() T) (T, bool) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}

// docTables lays the signed documents out as BatchCluster and the output
// lines take them: signatures, line documents and rank keys in input
// order; it counts what the summary line reports of them.
func docTables(e *env, docs []signedDoc, rank offline.Ranking, stats *dedupStats) ([]*similarity.Signature, []offline.Doc, []string) {
	sigs := make([]*similarity.Signature, len(docs))
	lineDocs := make([]offline.Doc, len(docs))
	keys := make([]string, len(docs))
	for i := range docs {
		sigs[i] = &docs[i].sig
		lineDocs[i] = offline.Doc{Key: docs[i].key, ID: docs[i].id, URL: docs[i].url, Popularity: docs[i].popularity, Input: docs[i].input}
		keys[i] = rank.Key(lineDocs[i])
		stats.Stages.seqTokens += len(docs[i].sig.Seq)
		if docs[i].sig.Empty() {
			stats.Empty++
		}
		if docs[i].cut {
			stats.Cut++
			e.log.Info("dedup_cut", "doc", docs[i].id, "msg", "page over the size cap: only its head is signed")
		}
	}
	return sigs, lineDocs, keys
}

// writeClusters writes one JSON line a cluster to w and counts the
// clusters and their duplicates.
func writeClusters(ctx context.Context, w io.Writer, clusters []similarity.Cluster, lineDocs []offline.Doc, sigs []*similarity.Signature, rank offline.Ranking, remove similarity.Decision, stats *dedupStats) error {
	bw := bufio.NewWriter(w)
	for _, c := range clusters {
		if err := ctx.Err(); err != nil {
			return err
		}
		stats.Clusters++
		stats.Duplicates += len(c.Members) - 1
		line := offline.NewLine(c, lineDocs, sigs, rank, remove)
		for _, m := range line.Members {
			if m.Removal != nil && m.Removal.Removable {
				stats.Removable++
			}
		}
		if err := line.Write(bw); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// signJob is one document for a signing worker, at its input position
// seq in input number input.
type signJob struct {
	seq, input int
	doc        corpus.Doc
}

// signDone is a signing worker's result for one signJob (seq -1 for an
// input's read error). The document is a pointer: gathering the results
// by value grew a slice of signedDoc through many copies, the largest
// allocation of the signing stage.
type signDone struct {
	seq, input int
	doc        *signedDoc
	err        error
}

// signInputs reads every source and signs its documents on all cores. A
// bad document is reported on stderr and skipped; the run goes on.
func signInputs(ctx context.Context, e *env, inputs []string, sources []iter.Seq2[corpus.Doc, error], sg page.Signer, report *inputReport) ([]signedDoc, dedupStats, error) {
	var stats dedupStats
	workers := e.cfg.Dedup.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan signJob, workers*2)
	results := make(chan signDone, workers*2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				res, err := sg.Sign(j.doc.Body, j.doc.ContentType)
				stats.Stages.add(&res)
				d := &signedDoc{id: j.doc.ID, url: j.doc.URL, popularity: j.doc.Popularity, sig: res.Sig, input: severalInput(inputs, j.input),
					key: offline.InputKey(len(inputs) > 1, inputs[j.input], j.doc.ID), cut: res.Doc.Truncated || res.Sig.Capped}
				if err != nil {
					err = fmt.Errorf("%s: %s: %w", inputs[j.input], j.doc.ID, err)
				}
				results <- signDone{seq: j.seq, input: j.input, doc: d, err: err}
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
					return // a source's error after ctx is done is ctx's
				}
				if err != nil {
					select {
					case results <- signDone{seq: -1, input: i, err: err}:
					case <-ctx.Done():
						return
					}
					continue
				}
				stats.Bytes += int64(len(doc.Body))
				select {
				case jobs <- signJob{seq: seq, input: i, doc: doc}:
				case <-ctx.Done():
					return
				}
				seq++
				t = time.Now()
			}
		}
	}()

	bar := newBar(e)
	var docs []*signedDoc
	var seqs []int
	for r := range results {
		if bar != nil {
			bar.Add(1)
		}
		if r.err != nil {
			stats.Errors++
			report.fail(r.input, r.err)
			continue
		}
		// A document counts as read once it signs: an input whose every
		// document is binary or fails otherwise gave no document.
		report.doc(r.input)
		stats.Docs++
		docs = append(docs, r.doc)
		seqs = append(seqs, r.seq)
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(e.stderr)
	}
	return inInputOrder(docs, seqs), stats, ctx.Err()
}

// inInputOrder returns docs sorted by their input positions seqs, each
// with a distinct key. Workers finish out of order, so both happen here,
// after the fact: the output, and the occurrence number a repeated ID
// (two JSONL lines with one id) gets for a stable cluster ID, must not
// depend on scheduling.
func inInputOrder(docs []*signedDoc, seqs []int) []signedDoc {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(seqs[a], seqs[b]) })
	sorted := make([]signedDoc, len(docs))
	var keys offline.Keys
	for i, o := range order {
		sorted[i] = *docs[o]
		sorted[i].key = keys.Next(sorted[i].key)
	}
	return sorted
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

// severalInput is input i's name as given when there are several inputs,
// for the output line; "" when there is one (its IDs are unique).
func severalInput(inputs []string, i int) string {
	if len(inputs) > 1 {
		return inputs[i]
	}
	return ""
}
