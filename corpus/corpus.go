package corpus

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/winnow-search/winnow/warc"
)

// Doc is one document of a corpus.
type Doc struct {
	// ID names the document uniquely within its input: the slash path
	// relative to the root for [Dir], the id field for [JSONL], the
	// WARC-Record-ID for [WARC].
	ID string
	// URL is where the document came from, or "" if unknown.
	URL string
	// Body is the document's bytes (after HTTP transfer and content
	// decoding for WARC responses). The Doc owns it.
	Body []byte
	// ContentType is "text/html" or "text/plain" when the input kind
	// says so, else the Content-Type header value as stored (which may
	// carry a charset parameter).
	ContentType string
}

// Default caps of [Options].
const (
	DefaultMaxFileSize = 50 << 20
	DefaultMaxLineSize = 64 << 20
)

// ErrTooLarge is wrapped by the error for a file, line or body over its
// size cap.
var ErrTooLarge = errors.New("corpus: too large")

// Error is the error for one bad item of an input: it says where.
type Error struct {
	// Input is the file or directory walked, or "" for a bare reader.
	Input string
	// Path is the file inside a directory walk, slash-separated; "" otherwise.
	Path string
	// Line is the 1-based line of a JSON Lines input; 0 otherwise.
	Line int
	// Offset is the WARC record's offset (see warc.Record.Offset), or -1.
	Offset int64
	// RecordID is the WARC-Record-ID, if known.
	RecordID string
	// Err is what went wrong.
	Err error
}

// Error formats e as "corpus: input/path: cause", "corpus: input: line N:
// cause" or "corpus: input: offset N: record ID: cause".
func (e *Error) Error() string {
	var parts []string
	if e.Input != "" || e.Path != "" {
		parts = append(parts, path.Join(filepath.ToSlash(e.Input), e.Path))
	}
	if e.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", e.Line))
	}
	var we *warc.Error
	if !errors.As(e.Err, &we) { // a warc.Error names its offset itself
		if e.Offset >= 0 {
			parts = append(parts, fmt.Sprintf("offset %d", e.Offset))
		}
		if e.RecordID != "" {
			parts = append(parts, "record "+e.RecordID)
		}
	}
	parts = append(parts, e.Err.Error())
	return "corpus: " + strings.Join(parts, ": ")
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// JSONLFields names the fields of a JSON Lines record. An empty name takes
// the default: "id", "url", "html", "text".
type JSONLFields struct {
	ID, URL, HTML, Text string
}

// Options configures the sources. The zero value is ready to use, and the
// package-level functions use it.
type Options struct {
	// MaxFileSize caps a file of a directory walk or a single file, and a
	// WARC record's body, in bytes; 0 means DefaultMaxFileSize (50 MiB).
	MaxFileSize int64
	// MaxLineSize caps a JSON Lines line in bytes; 0 means
	// DefaultMaxLineSize (64 MiB).
	MaxLineSize int
	// Fields names the JSON Lines fields for Open.
	Fields JSONLFields
	// Accept says which WARC payload media types (lower case, without
	// parameters) become documents; nil accepts text/html,
	// application/xhtml+xml and text/plain.
	Accept func(mediaType string) bool
}

func (o Options) maxFile() int64 { return cmp.Or(o.MaxFileSize, DefaultMaxFileSize) }
func (o Options) maxLine() int   { return cmp.Or(o.MaxLineSize, DefaultMaxLineSize) }

func (o Options) accept(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(contentType), ";")
		mt = strings.TrimSpace(mt)
	}
	if o.Accept != nil {
		return o.Accept(mt)
	}
	return mt == "text/html" || mt == "application/xhtml+xml" || mt == "text/plain"
}

// fileKind returns the Content-Type for a file name's extension, or "" for
// a file that is no document.
func fileKind(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return "text/html"
	case ".txt", ".text":
		return "text/plain"
	}
	return ""
}

// Dir walks the directory root with the default [Options]; see [Options.Dir].
func Dir(root string) iter.Seq2[Doc, error] { return Options{}.Dir(root) }

// JSONL reads JSON Lines with the default [Options]; see [Options.JSONL].
func JSONL(r io.Reader, f JSONLFields) iter.Seq2[Doc, error] { return Options{}.JSONL(r, f) }

// WARC reads a WARC file with the default [Options]; see [Options.WARC].
func WARC(r io.Reader) iter.Seq2[Doc, error] { return Options{}.WARC(r) }

// Open reads the input at path with the default [Options]; see [Options.Open].
func Open(path string) iter.Seq2[Doc, error] { return Options{}.Open(path) }

// Dir yields the documents under the directory root: files named *.html,
// *.htm, *.xhtml (as text/html), *.txt and *.text (as text/plain), in
// lexical order within each directory (the order of fs.WalkDir); other
// files are skipped. A Doc's ID is its slash path relative to root and its
// URL is "". A file over MaxFileSize, or one that cannot be read, yields an
// error and the walk goes on; a directory that cannot be read yields an
// error and is skipped.
func (o Options) Dir(root string) iter.Seq2[Doc, error] {
	return o.walk(os.DirFS(root), ".", root)
}

// FS is like [Options.Dir] on the tree under dir in fsys (an embed.FS,
// say). IDs are relative to dir.
func (o Options) FS(fsys fs.FS, dir string) iter.Seq2[Doc, error] {
	return o.walk(fsys, dir, dir)
}

func (o Options) walk(fsys fs.FS, dir, input string) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		stopped := false
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
			if dir == "." {
				rel = p
			}
			if err != nil {
				if !yield(Doc{}, &Error{Input: input, Path: rel, Offset: -1, Err: err}) {
					stopped = true
					return fs.SkipAll
				}
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			ct := fileKind(p)
			if d.IsDir() || ct == "" || !d.Type().IsRegular() {
				return nil
			}
			body, err := o.readFile(fsys, p)
			var doc Doc
			if err != nil {
				err = &Error{Input: input, Path: rel, Offset: -1, Err: err}
			} else {
				doc = Doc{ID: rel, Body: body, ContentType: ct}
			}
			if !yield(doc, err) {
				stopped = true
				return fs.SkipAll
			}
			return nil
		})
		if err != nil && !stopped {
			yield(Doc{}, &Error{Input: input, Offset: -1, Err: err})
		}
	}
}

func (o Options) readFile(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && fi.Size() > o.maxFile() {
		return nil, fmt.Errorf("%w: file of %d bytes over the %d byte cap", ErrTooLarge, fi.Size(), o.maxFile())
	}
	if err == nil && fi.Mode().IsRegular() {
		// A buffer of the file's size and one byte to see the end:
		// io.ReadAll's doublings from 512 bytes copy and clear each page
		// several times.
		b := make([]byte, 0, fi.Size()+1)
		for {
			n, err := f.Read(b[len(b):cap(b)])
			b = b[:len(b)+n]
			switch {
			case err == io.EOF:
				return b, nil
			case err != nil:
				return nil, err
			case len(b) == cap(b): // the file grew: read on, capped
				return readCapped(io.MultiReader(bytes.NewReader(b), f), o.maxFile())
			}
		}
	}
	return readCapped(f, o.maxFile())
}

// readCapped reads r to the end, failing if it holds more than max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: over the %d byte cap", ErrTooLarge, max)
	}
	return b, nil
}

// JSONL yields one document per line of r, a JSON Lines (NDJSON) stream of
// objects. f names the fields (see [JSONLFields]). The body is the html
// field (ContentType "text/html") if it is a non-empty string, else the text
// field ("text/plain"). The id may be a string or a number; without one the
// ID is the line number in decimal. Blank lines are skipped. A line that is
// not a JSON object, lacks both html and text, or is longer than
// MaxLineSize yields an error naming its line number, and the walk goes on.
func (o Options) JSONL(r io.Reader, f JSONLFields) iter.Seq2[Doc, error] {
	return o.jsonl(r, f, "")
}

func (o Options) jsonl(r io.Reader, f JSONLFields, input string) iter.Seq2[Doc, error] {
	f.ID = cmp.Or(f.ID, "id")
	f.URL = cmp.Or(f.URL, "url")
	f.HTML = cmp.Or(f.HTML, "html")
	f.Text = cmp.Or(f.Text, "text")
	return func(yield func(Doc, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var line []byte
		for n := 1; ; n++ {
			var err error
			line, err = readLine(br, line[:0], o.maxLine())
			if err == io.EOF && len(line) == 0 {
				return
			}
			if err != nil && err != io.EOF {
				if !yield(Doc{}, &Error{Input: input, Line: n, Offset: -1, Err: err}) || !errors.Is(err, ErrTooLarge) {
					return
				}
				continue
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			doc, derr := parseJSONLine(line, f, n)
			if derr != nil {
				derr = &Error{Input: input, Line: n, Offset: -1, Err: derr}
			}
			if !yield(doc, derr) || err == io.EOF {
				return
			}
		}
	}
}

// readLine appends the next line of br to line, without its newline. A line
// over max bytes is skipped to its end and gives ErrTooLarge.
func readLine(br *bufio.Reader, line []byte, max int) ([]byte, error) {
	over := false
	for {
		frag, err := br.ReadSlice('\n')
		if !over {
			if len(line)+len(frag) > max+1 {
				over = true
				line = line[:0]
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			if err == nil || err == io.EOF {
				return line[:0], fmt.Errorf("%w: line over the %d byte cap", ErrTooLarge, max)
			}
			return nil, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		return line, err
	}
}

func parseJSONLine(line []byte, f JSONLFields, n int) (Doc, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return Doc{}, fmt.Errorf("not a JSON object: %w", err)
	}
	str := func(key string) (string, error) {
		raw, ok := obj[key]
		if !ok || string(raw) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("field %q is not a string", key)
		}
		return s, nil
	}
	doc := Doc{ID: strconv.Itoa(n)}
	if raw, ok := obj[f.ID]; ok && string(raw) != "null" {
		var num json.Number
		if err := json.Unmarshal(raw, &doc.ID); err != nil {
			if err := json.Unmarshal(raw, &num); err != nil {
				return Doc{}, fmt.Errorf("field %q is neither a string nor a number", f.ID)
			}
			doc.ID = num.String()
		}
	}
	var err error
	if doc.URL, err = str(f.URL); err != nil {
		return Doc{}, err
	}
	html, err := str(f.HTML)
	if err != nil {
		return Doc{}, err
	}
	text, err := str(f.Text)
	if err != nil {
		return Doc{}, err
	}
	switch {
	case html != "":
		doc.Body, doc.ContentType = []byte(html), "text/html"
	case text != "":
		doc.Body, doc.ContentType = []byte(text), "text/plain"
	default:
		return Doc{}, fmt.Errorf("neither %q nor %q is a non-empty string", f.HTML, f.Text)
	}
	return doc, nil
}

// WARC yields the documents of a WARC file (see package warc): response
// records whose block is an HTTP response with a 2xx status (the body,
// with ContentType from the HTTP Content-Type header), response records
// that hold no HTTP message and resource records (the block, with the
// record's Content-Type). Only payloads whose media type Accept allows
// become documents; request, metadata, warcinfo, revisit and other records
// are skipped. A Doc's ID is the WARC-Record-ID and its URL the
// WARC-Target-URI. A damaged record, an undecodable payload or a body over
// MaxFileSize yields an error naming the record's offset, and the walk goes
// on; an input read error ends it.
func (o Options) WARC(r io.Reader) iter.Seq2[Doc, error] {
	return o.warc(r, "")
}

func (o Options) warc(r io.Reader, input string) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		wr, err := warc.NewReader(r)
		if err != nil {
			yield(Doc{}, &Error{Input: input, Offset: 0, Err: err})
			return
		}
		for {
			rec, err := wr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				e := &Error{Input: input, Offset: -1, Err: err}
				var we *warc.Error
				if errors.As(err, &we) {
					e.Offset, e.RecordID = we.Offset, we.RecordID
				}
				if !yield(Doc{}, e) || we == nil {
					return // a read error of the input ends the walk
				}
				continue
			}
			doc, ok, err := o.warcDoc(rec)
			if err != nil {
				if !yield(Doc{}, &Error{Input: input, Offset: rec.Offset, RecordID: rec.RecordID, Err: err}) {
					return
				}
				continue
			}
			if ok && !yield(doc, nil) {
				return
			}
		}
	}
}

// warcDoc returns the document of one record, ok false if it has none.
func (o Options) warcDoc(rec *warc.Record) (doc Doc, ok bool, err error) {
	doc = Doc{ID: rec.RecordID, URL: rec.TargetURI, ContentType: rec.ContentType}
	var body io.Reader = rec.Content
	switch rec.Type {
	case "response":
		mt, _, _ := mime.ParseMediaType(rec.ContentType)
		if mt == "application/http" {
			status, h, b, err := warc.ParseHTTPResponse(rec.Content)
			if err != nil {
				return Doc{}, false, err
			}
			if status < 200 || status > 299 {
				return Doc{}, false, nil
			}
			doc.ContentType, body = h.Get("Content-Type"), b
		}
	case "resource":
	default:
		return Doc{}, false, nil
	}
	if !o.accept(doc.ContentType) {
		return Doc{}, false, nil
	}
	if doc.Body, err = readCapped(body, o.maxFile()); err != nil {
		return Doc{}, false, err
	}
	return doc, true, nil
}

// Open yields the documents of the input at path, by its kind: a
// directory as [Options.Dir]; *.jsonl, *.ndjson and the same with .gz as
// [Options.JSONL] with the Fields of o; *.warc and *.warc.gz as
// [Options.WARC]; a single .html, .htm, .xhtml, .txt or .text file as one
// Doc whose ID is path. Errors name path. The file is closed when the walk
// ends.
func (o Options) Open(path string) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		fail := func(err error) { yield(Doc{}, &Error{Input: path, Offset: -1, Err: err}) }
		fi, err := os.Stat(path)
		if err != nil {
			fail(err)
			return
		}
		if fi.IsDir() {
			for doc, err := range o.Dir(path) {
				if !yield(doc, err) {
					return
				}
			}
			return
		}
		name := strings.ToLower(filepath.Base(path))
		base, gz := strings.CutSuffix(name, ".gz")
		var seq func(io.Reader) iter.Seq2[Doc, error]
		switch {
		case strings.HasSuffix(base, ".jsonl") || strings.HasSuffix(base, ".ndjson"):
			seq = func(r io.Reader) iter.Seq2[Doc, error] { return o.jsonl(r, o.Fields, path) }
		case strings.HasSuffix(base, ".warc"):
			gz = false // package warc detects gzip itself
			seq = func(r io.Reader) iter.Seq2[Doc, error] { return o.warc(r, path) }
		case !gz && fileKind(name) != "":
			body, err := o.readFile(os.DirFS(filepath.Dir(path)), filepath.Base(path))
			if err != nil {
				fail(err)
				return
			}
			yield(Doc{ID: path, Body: body, ContentType: fileKind(name)}, nil)
			return
		default:
			fail(errors.New("unknown input kind (want a directory, .jsonl, .ndjson, .warc, .html or .txt)"))
			return
		}
		f, err := os.Open(path)
		if err != nil {
			fail(err)
			return
		}
		defer f.Close()
		var r io.Reader = bufio.NewReaderSize(f, 256<<10)
		if gz {
			zr, err := gzip.NewReader(r)
			if err != nil {
				fail(err)
				return
			}
			r = zr
		}
		for doc, err := range seq(r) {
			if !yield(doc, err) {
				return
			}
		}
	}
}
