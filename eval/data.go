// Package eval scores near-duplicate methods on labelled data sets: pair
// mode (pairs of documents, each judged on a graded scale, as in
// webis-ecir20) and corpus mode (a folder of pages whose duplicate pairs
// are listed and every other pair is distinct, as in llvm-docs). It reports
// precision, recall and F1 per method at the papers' published thresholds
// and at the best threshold found on the data, and for a [similarity.Decision].
package eval

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mode tells how a data set is laid out.
type Mode int

const (
	// PairMode: pairs.tsv (subset, pair, doc_a, doc_b, label) and
	// pairs/<pair>/<doc>.txt.
	PairMode Mode = iota + 1
	// CorpusMode: docs.tsv (doc, ...), pairs.tsv (doc_a, doc_b, ratio,
	// label dup|grey) and html/<doc>.
	CorpusMode
)

func (m Mode) String() string {
	switch m {
	case PairMode:
		return "pair"
	case CorpusMode:
		return "corpus"
	}
	return "unknown"
}

// ErrLayout reports a folder that is neither a pair-mode nor a corpus-mode
// data set.
var ErrLayout = errors.New("eval: folder holds neither pairs.tsv with pairs/ nor docs.tsv with html/")

// DetectMode tells the mode of the data set in dir by the files it holds.
// A dir that does not exist gives an error that says so (and matches
// [fs.ErrNotExist]); a folder of another layout, [ErrLayout].
func DetectMode(dir string) (Mode, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		return 0, fmt.Errorf("eval: %s does not exist (%w)", dir, err)
	} else if err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case exists("docs.tsv") && exists("html") && exists("pairs.tsv"):
		return CorpusMode, nil
	case exists("pairs.tsv") && exists("pairs"):
		return PairMode, nil
	}
	return 0, fmt.Errorf("%w: %s", ErrLayout, dir)
}

// Doc is one document of a data set.
type Doc struct {
	ID          string
	Path        string
	ContentType string
}

// Pair is one labelled pair. Label is the graded judgement in pair mode
// (0..3) and 1 for a duplicate in corpus mode.
type Pair struct {
	Subset string
	A, B   int // indexes into Set.Docs
	Label  int
}

// Set is a loaded data set.
type Set struct {
	Mode Mode
	Dir  string
	Docs []Doc
	// Pairs are the judged pairs (pair mode) or the duplicate pairs
	// (corpus mode).
	Pairs []Pair
	// Grey holds the corpus-mode pairs left out of scoring, keyed by
	// [PairKey].
	Grey map[uint64]bool
}

// PairKey is an order-independent key of a pair of document indexes.
func PairKey(a, b int) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(b)
}

// Load reads the data set in dir, detecting its mode.
func Load(dir string) (*Set, error) {
	mode, err := DetectMode(dir)
	if err != nil {
		return nil, err
	}
	s := &Set{Mode: mode, Dir: dir, Grey: map[uint64]bool{}}
	if mode == PairMode {
		return s, s.loadPairs()
	}
	return s, s.loadCorpus()
}

func readTSV(path string, minCols int) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 || strings.TrimSpace(sc.Text()) == "" {
			continue // header
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < minCols {
			return nil, fmt.Errorf("eval: %s:%d: %d columns, want %d", path, line, len(cols), minCols)
		}
		rows = append(rows, cols)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	return rows, nil
}

func (s *Set) loadPairs() error {
	rows, err := readTSV(filepath.Join(s.Dir, "pairs.tsv"), 5)
	if err != nil {
		return err
	}
	index := map[string]int{}
	doc := func(pair, id string) (int, error) {
		path := filepath.Join(s.Dir, "pairs", pair, id+".txt")
		if i, ok := index[path]; ok {
			return i, nil
		}
		if _, err := os.Stat(path); err != nil {
			return 0, fmt.Errorf("eval: %w", err)
		}
		index[path] = len(s.Docs)
		s.Docs = append(s.Docs, Doc{ID: pair + "/" + id, Path: path, ContentType: "text/plain"})
		return index[path], nil
	}
	for _, r := range rows {
		label, err := strconv.Atoi(r[4])
		if err != nil {
			return fmt.Errorf("eval: pairs.tsv: pair %s: label %q is not a number", r[1], r[4])
		}
		a, err := doc(r[1], r[2])
		if err != nil {
			return err
		}
		b, err := doc(r[1], r[3])
		if err != nil {
			return err
		}
		s.Pairs = append(s.Pairs, Pair{Subset: r[0], A: a, B: b, Label: label})
	}
	return nil
}

func (s *Set) loadCorpus() error {
	rows, err := readTSV(filepath.Join(s.Dir, "docs.tsv"), 1)
	if err != nil {
		return err
	}
	index := map[string]int{}
	for _, r := range rows {
		path := filepath.Join(s.Dir, "html", filepath.FromSlash(r[0]))
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("eval: docs.tsv lists %s, which is missing", r[0])
			}
			return fmt.Errorf("eval: %w", err)
		}
		index[r[0]] = len(s.Docs)
		s.Docs = append(s.Docs, Doc{ID: r[0], Path: path, ContentType: "text/html"})
	}
	rows, err = readTSV(filepath.Join(s.Dir, "pairs.tsv"), 4)
	if err != nil {
		return err
	}
	for _, r := range rows {
		a, okA := index[r[0]]
		b, okB := index[r[1]]
		if !okA || !okB {
			return fmt.Errorf("eval: pairs.tsv: pair %s %s names a document not in docs.tsv", r[0], r[1])
		}
		switch r[3] {
		case "dup":
			s.Pairs = append(s.Pairs, Pair{A: a, B: b, Label: 1})
		case "grey":
			s.Grey[PairKey(a, b)] = true
		default:
			return fmt.Errorf("eval: pairs.tsv: pair %s %s: label %q is not dup or grey", r[0], r[1], r[3])
		}
	}
	return nil
}
