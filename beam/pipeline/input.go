package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/options"
)

// Kinds of [Shard].
const (
	KindSample = "sample" // the embedded sample corpus
	KindFiles  = "files"  // some files of a directory
	KindRange  = "range"  // a line-aligned byte range of a JSON Lines file
	KindWARC   = "warc"   // the records of a WARC file that start in a byte range
	KindWhole  = "whole"  // a whole input read by corpus.Options.Open
)

// Shard is one unit of input that one worker reads.
type Shard struct {
	// Input is the input's position on the command line, Name its
	// argument ("sample" for the embedded corpus).
	Input int
	Name  string
	// Index orders the shards of one input.
	Index int
	Kind  string
	// Path is the file or directory read.
	Path string
	// Files are the slash paths under Path of a KindFiles shard.
	Files []string
	// Start and End bound a KindRange or KindWARC shard in bytes;
	// FirstLine is the line number of a KindRange's first line.
	Start, End, FirstLine int64
}

// SplitOptions configures [Split]. The zero value uses the defaults.
type SplitOptions struct {
	// FilesPerShard is the number of files of a directory one shard reads.
	// Zero means 64.
	FilesPerShard int
	// RangeBytes is the size above which a plain JSON Lines file or a
	// WARC file (plain, or gzip'ed record by record) is read in ranges of
	// about this many bytes. Zero means 64 MiB.
	RangeBytes int64
}

// Split cuts the inputs into shards. An empty inputs means the embedded
// sample. It reads a directory's listing and, to align ranges to lines
// and number them, every large JSON Lines file once.
func Split(inputs []string, o SplitOptions) ([]Shard, error) {
	if o.FilesPerShard <= 0 {
		o.FilesPerShard = 64
	}
	if o.RangeBytes <= 0 {
		o.RangeBytes = 64 << 20
	}
	if len(inputs) == 0 {
		return []Shard{{Name: "sample", Kind: KindSample}}, nil
	}
	var out []Shard
	for i, in := range inputs {
		fi, err := os.Stat(in)
		if err != nil {
			return nil, err
		}
		name := strings.ToLower(filepath.Base(in))
		switch {
		case fi.IsDir():
			files, err := listFiles(in)
			if err != nil {
				return nil, err
			}
			for k := 0; k*o.FilesPerShard < len(files) || k == 0; k++ {
				part := files[k*o.FilesPerShard : min(len(files), (k+1)*o.FilesPerShard)]
				out = append(out, Shard{Input: i, Name: in, Index: k, Kind: KindFiles, Path: in, Files: part})
			}
		case (strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".ndjson")) && fi.Size() > o.RangeBytes:
			ranges, err := lineRanges(in, o.RangeBytes)
			if err != nil {
				return nil, err
			}
			for k, r := range ranges {
				r.Input, r.Name, r.Index = i, in, k
				out = append(out, r)
			}
		case isWARC(name) && fi.Size() > o.RangeBytes:
			ranges, err := warcRanges(in, fi.Size(), o.RangeBytes)
			if err != nil {
				return nil, err
			}
			for k, r := range ranges {
				r.Input, r.Name, r.Index = i, in, k
				out = append(out, r)
			}
		default:
			out = append(out, Shard{Input: i, Name: in, Kind: KindWhole, Path: in})
		}
	}
	return out, nil
}

// listFiles lists the regular files under root in walk order (lexical),
// as slash paths; corpus decides which are documents.
func listFiles(root string) ([]string, error) {
	var files []string
	err := fs.WalkDir(corpus.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// corpus reports it when the shard walks; keep the walk going.
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// lineRanges cuts the file at path into ranges of about size bytes that
// start at line starts, each with its first line number.
func lineRanges(path string, size int64) ([]Shard, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Shard
	br := bufio.NewReaderSize(f, 1<<20)
	var pos, line, start, startLine int64 = 0, 1, 0, 1
	for {
		chunk, err := br.ReadSlice('\n')
		pos += int64(len(chunk))
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			line++
			if pos-start >= size {
				out = append(out, Shard{Kind: KindRange, Path: path, Start: start, End: pos, FirstLine: startLine})
				start, startLine = pos, line
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if pos > start || len(out) == 0 {
		out = append(out, Shard{Kind: KindRange, Path: path, Start: start, End: pos, FirstLine: startLine})
	}
	return out, nil
}

// Docs returns the documents of shard s, read by package corpus with o,
// in input order; the sample's at the URLs of c (options.Sample).
func (s Shard) Docs(c config.Config, o corpus.Options) iter.Seq2[corpus.Doc, error] {
	switch s.Kind {
	case KindSample:
		return options.Sample(c)
	case KindFiles:
		// corpus.DirFS, not os.DirFS, which refuses names that are not
		// UTF-8: their files were left out of the shard without a word.
		return o.FS(&subsetFS{fsys: corpus.DirFS(s.Path), files: slices.Sorted(slices.Values(s.Files))}, ".")
	case KindRange:
		return s.rangeDocs(o)
	case KindWARC:
		return o.WARCRange(s.Path, s.Start, s.End)
	default:
		return o.Open(s.Path)
	}
}

// rangeDocs reads a line range with corpus's JSON Lines reader, preceded
// by FirstLine-1 empty lines so that line numbers (default IDs, errors)
// are those of the whole file; corpus skips blank lines.
func (s Shard) rangeDocs(o corpus.Options) iter.Seq2[corpus.Doc, error] {
	return func(yield func(corpus.Doc, error) bool) {
		f, err := os.Open(s.Path)
		if err != nil {
			yield(corpus.Doc{}, &corpus.Error{Input: s.Path, Offset: -1, Err: err})
			return
		}
		defer f.Close()
		if _, err := f.Seek(s.Start, io.SeekStart); err != nil {
			yield(corpus.Doc{}, &corpus.Error{Input: s.Path, Offset: -1, Err: err})
			return
		}
		pad := &repeatReader{b: '\n', n: s.FirstLine - 1}
		r := io.MultiReader(pad, bufio.NewReaderSize(io.LimitReader(f, s.End-s.Start), 256<<10))
		for d, err := range o.JSONL(r, o.Fields) {
			var ce *corpus.Error
			if errors.As(err, &ce) && ce.Input == "" {
				ce.Input = s.Path
			}
			if !yield(d, err) {
				return
			}
		}
	}
}

// repeatReader reads n copies of b.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	copy(p[:k], bytes.Repeat([]byte{r.b}, k))
	r.n -= int64(k)
	return k, nil
}

// subsetFS is fsys showing only files and the directories that lead to
// them, so corpus's walk reads one shard's files with its own rules.
type subsetFS struct {
	fsys  fs.FS
	files []string // sorted slash paths
}

func (s *subsetFS) Open(name string) (fs.File, error) { return s.fsys.Open(name) }

// ReadDir lists the entries of name that are shard files or lead to one.
func (s *subsetFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(s.fsys, name)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if name != "." {
		prefix = name + "/"
	}
	var out []fs.DirEntry
	for _, e := range entries {
		p := prefix + e.Name()
		i, found := slices.BinarySearch(s.files, p)
		if found || e.IsDir() && i < len(s.files) && strings.HasPrefix(s.files[i], p+"/") {
			out = append(out, e)
		}
	}
	return out, nil
}
