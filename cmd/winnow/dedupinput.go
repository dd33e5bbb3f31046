package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/warc"
)

// maxWarnings is how many bad items dedup logs one by one; past it, they
// are only counted, and the summary gives the count by kind (a broken
// JSONL file can hold 19,000 bad lines).
const maxWarnings = 20

// ErrNothingRead is returned by dedup when no input gave a document, or
// every input failed.
var ErrNothingRead = errors.New("nothing could be read")

// inputReport tallies what dedup read from its inputs: documents and
// errors per input, items skipped on purpose by kind, errors by kind. It
// is safe for concurrent use: the reader reports skips, the collector
// errors and documents.
type inputReport struct {
	log    *slog.Logger
	inputs []string

	mu     sync.Mutex
	docs   []int          // per input; guarded by mu
	errs   []int          // per input; guarded by mu
	skips  map[string]int // by kind; guarded by mu
	errKnd map[string]int // by kind; guarded by mu
	warned int            // errors logged one by one; guarded by mu
}

func newInputReport(log *slog.Logger, inputs []string) *inputReport {
	return &inputReport{log: log, inputs: inputs, docs: make([]int, len(inputs)), errs: make([]int, len(inputs)),
		skips: map[string]int{}, errKnd: map[string]int{}}
}

// skip counts an item that holds no document.
func (r *inputReport) skip(s corpus.Skip) {
	r.mu.Lock()
	r.skips[s.Kind]++
	r.mu.Unlock()
}

// doc counts a document read from input i.
func (r *inputReport) doc(i int) {
	r.mu.Lock()
	r.docs[i]++
	r.mu.Unlock()
}

// fail counts a bad item of input i (-1 if unknown) and logs the first
// maxWarnings.
func (r *inputReport) fail(i int, err error) {
	r.mu.Lock()
	if i >= 0 && i < len(r.errs) {
		r.errs[i]++
	}
	r.errKnd[errorKind(err)]++
	r.warned++
	n := r.warned
	r.mu.Unlock()
	switch {
	case n <= maxWarnings:
		r.log.Warn("dedup_skip", "err", err)
	case n == maxWarnings+1:
		r.log.Warn("dedup_skip", "note", fmt.Sprintf("more bad items: not logged one by one; the summary counts them by kind (first %d logged)", maxWarnings))
	}
}

// errorKind names the kind of a bad item's error, for the summary.
func errorKind(err error) string {
	switch {
	case errors.Is(err, warc.ErrTruncated):
		return "truncated record"
	case errors.Is(err, warc.ErrUnsupportedEncoding):
		return "unsupported content encoding"
	case errors.Is(err, warc.ErrMalformed):
		return "malformed record"
	case errors.Is(err, corpus.ErrTooLarge):
		return "over the size cap"
	case errors.Is(err, corpus.ErrCorrupt):
		return "checksum mismatch"
	}
	var ce *corpus.Error
	if errors.As(err, &ce) {
		switch {
		case ce.Line > 0:
			return "bad JSON line"
		case ce.Path == "" && ce.Offset < 0:
			return "unreadable input"
		}
	}
	return "unreadable document"
}

// summary is the report's lines for stderr: what was skipped and why.
func (r *inputReport) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	if len(r.skips) > 0 {
		n := 0
		for _, v := range r.skips {
			n += v
		}
		fmt.Fprintf(&b, "winnow dedup: %d items hold no page and were skipped: %s\n", n, offline.FormatCounts(r.skips))
	}
	if len(r.errKnd) > 0 {
		fmt.Fprintf(&b, "winnow dedup: %d bad items skipped: %s\n", r.warned, offline.FormatCounts(r.errKnd))
	}
	return b.String()
}

// err returns ErrNothingRead, naming the failed inputs, when no document
// was read or every input failed (gave errors and no document); nil
// otherwise.
func (r *inputReport) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	total, failed := 0, 0
	var names []string
	for i, n := range r.docs {
		total += n
		if n == 0 && r.errs[i] > 0 {
			failed++
			names = append(names, r.inputs[i])
		}
	}
	switch {
	case total == 0 && len(names) > 0:
		return fmt.Errorf("%w: no document in %s", ErrNothingRead, strings.Join(names, ", "))
	case total == 0:
		return fmt.Errorf("%w: no document in the input", ErrNothingRead)
	case failed == len(r.inputs):
		return fmt.Errorf("%w: every input failed", ErrNothingRead)
	}
	return nil
}

// checkInputs returns an error naming every input path that cannot be
// found or reached, before any work: a mistyped path is the operator's
// to fix, not an input to skip after hours of signing the others (a bad
// record inside an input is skipped and counted, as before).
func checkInputs(paths []string) error {
	var bad []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("nothing was read, an input cannot be opened: %s", strings.Join(bad, "; "))
	}
	return nil
}

// openInputs returns the document sources of the offline commands' INPUT
// arguments (no argument: the embedded sample) and the report that counts
// what they skip. The sources stop when ctx is done, wherever they are. WARC inputs share one revisit index, so a revisit
// resolves to a record of an earlier input.
func openInputs(ctx context.Context, e *env, args []string) ([]string, []iter.Seq2[corpus.Doc, error], *inputReport) {
	var inputs []string
	var sources []iter.Seq2[corpus.Doc, error]
	if len(args) == 0 {
		// The sample's pages at the URLs the demo engine of winnow serve
		// gives them, so that a cluster service loaded with them knows
		// the pages the proxy sees.
		inputs = []string{"sample"}
		sources = append(sources, options.Sample(e.cfg))
	}
	inputs = append(inputs, args...)
	tally := newInputReport(e.log, inputs)
	opts := options.CorpusOptions(e.cfg)
	opts.OnSkip, opts.Targets = tally.skip, &corpus.Targets{}
	for _, in := range args {
		sources = append(sources, opts.OpenContext(ctx, in))
	}
	return inputs, sources, tally
}
