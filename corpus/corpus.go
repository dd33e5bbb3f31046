package corpus

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/winnow-search/winnow/canon"
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
	// Popularity is the page's popularity score when the input gives one
	// (a JSON Lines field), else 0.
	Popularity float64
	// ContentType is "text/html" or "text/plain" when the input kind
	// says so (with "; charset=utf-8" for a JSON string or a Parquet
	// string column, which hold Unicode whatever a page's <meta> says),
	// else the Content-Type header value as stored (which may carry a
	// charset parameter).
	ContentType string
}

// The content types of documents held as Unicode strings.
const (
	htmlUTF8 = "text/html; charset=utf-8"
	textUTF8 = "text/plain; charset=utf-8"
)

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
	// Row is the 1-based row of a Parquet input; 0 otherwise.
	Row int
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
	if e.Row > 0 {
		parts = append(parts, fmt.Sprintf("row %d", e.Row))
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

// JSONLFields names the fields of a JSON Lines record. Each is a list of
// names tried in order: the first that the record holds (not null, and for
// HTML and Text a non-empty string) is used. A nil list takes the one of
// [DefaultJSONLFields].
type JSONLFields struct {
	ID, URL, HTML, Text, Popularity []string
}

// DefaultJSONLFields are the field names of common web datasets: C4 and
// Dolma (text, url, id), RefinedWeb (content, url), RedPajama (raw_content),
// and dumps of crawled pages (html, body).
var DefaultJSONLFields = JSONLFields{
	ID:         []string{"id"},
	URL:        []string{"url"},
	HTML:       []string{"html"},
	Text:       []string{"text", "content", "raw_content", "body"},
	Popularity: []string{"popularity"},
}

func (f JSONLFields) withDefaults() JSONLFields {
	d := DefaultJSONLFields
	if f.ID == nil {
		f.ID = d.ID
	}
	if f.URL == nil {
		f.URL = d.URL
	}
	if f.HTML == nil {
		f.HTML = d.HTML
	}
	if f.Text == nil {
		f.Text = d.Text
	}
	if f.Popularity == nil {
		f.Popularity = d.Popularity
	}
	return f
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
	// OnSkip, if not nil, is called for each item that holds no document
	// (see [Skip]), from the goroutine that runs the walk.
	OnSkip func(Skip)
	// Targets, if not nil, is shared by the WARC inputs of several walks
	// so that a revisit record resolves to a record of an earlier input;
	// nil: each walk resolves revisits within its own input.
	Targets *Targets
}

func (o Options) maxFile() int64 { return cmp.Or(o.MaxFileSize, DefaultMaxFileSize) }
func (o Options) maxLine() int   { return cmp.Or(o.MaxLineSize, DefaultMaxLineSize) }

// accept returns the media type of contentType ([canon.MediaType], "none"
// if it has none) and whether Accept allows it.
func (o Options) accept(contentType string) (string, bool) {
	mt := cmp.Or(canon.MediaType(contentType), "none")
	if o.Accept != nil {
		return mt, o.Accept(mt)
	}
	return mt, mt == "text/html" || mt == "application/xhtml+xml" || mt == "text/plain"
}

// fileExt returns the lower-case extension of a file name. A query that
// wget kept in the name of a page it mirrored ("list.html?page=2",
// "style.css?v=3") is no part of it.
func fileExt(name string) string {
	name = path.Base(name)
	if q := strings.IndexByte(name, '?'); q > 0 {
		name = name[:q]
	}
	return strings.ToLower(path.Ext(name))
}

// fileKind returns the Content-Type for a file name's extension, or "" for
// a file that is no document.
func fileKind(name string) string {
	switch fileExt(name) {
	case ".html", ".htm", ".xhtml":
		return "text/html"
	case ".txt", ".text":
		return "text/plain"
	}
	return ""
}

// sniffHTML returns "text/html" if the file p starts as an HTML page does
// (net/http.DetectContentType, as a browser sniffs), else "": a page that
// a wget mirror saved under its URL's name (about, post.php?id=3) says
// so only in its bytes.
func sniffHTML(fsys fs.FS, p string) string {
	f, err := fsys.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	var head [512]byte
	n, _ := io.ReadFull(f, head[:])
	if mt, _, _ := strings.Cut(http.DetectContentType(head[:n]), ";"); mt == "text/html" {
		return mt
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

// Open is [Options.OpenContext] with a context that is never done.
func (o Options) Open(path string) iter.Seq2[Doc, error] {
	return o.OpenContext(context.Background(), path)
}

// Dir yields the documents under the directory root: files named *.html,
// *.htm, *.xhtml (as text/html), *.txt and *.text (as text/plain), a
// query in the name that wget kept ("list.html?page=2") aside, and files
// of other names whose bytes start as an HTML page's do (pages a wget
// mirror saved under their URLs' names: about, post.php?id=3), in
// lexical order within each directory (the order of fs.WalkDir); other
// files are skipped. A Doc's ID is its slash path relative to root and its
// URL is "". A file over MaxFileSize, or one that cannot be read, yields an
// error and the walk goes on; a directory that cannot be read yields an
// error and is skipped.
//
// Symbolic links are followed once: a link to a document file yields it
// under the link's path; a link to a directory is walked under the link's
// path unless that directory was walked already or holds the link (a
// loop), and is then skipped as "symlink to a walked folder". A broken
// link (or one to itself) is skipped as "symlink broken", and anything
// that is neither a file nor a directory (a named pipe, a socket, a
// device) as "not a regular file": every entry of the tree is a
// document, an error or a counted [Skip].
func (o Options) Dir(root string) iter.Seq2[Doc, error] {
	return o.dir(context.Background(), root)
}

func (o Options) dir(ctx context.Context, root string) iter.Seq2[Doc, error] {
	return o.walk(ctx, osDir(root), ".", root)
}

// osDir is os.DirFS without its fs.ValidPath check, which refuses a name
// that is not UTF-8: a Latin-1 file name of an old archive, or the bytes
// of a URL that a wget mirror kept, names a page all the same. The walk
// opens only the names its own listing gave. Stat does not open (a named
// pipe would block), as os.DirFS's does not.
type osDir string

// DirFS is the file system of the tree under root as [Options.Dir] reads
// it: unlike os.DirFS it opens a name that is not UTF-8. It is for
// [Options.FS] over a part of a folder (winnow-beam reads a folder in
// shards of its files).
func DirFS(root string) fs.FS { return osDir(root) }

func (d osDir) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

func (d osDir) Open(name string) (fs.File, error) { return os.Open(d.path(name)) }

func (d osDir) Stat(name string) (fs.FileInfo, error) { return os.Stat(d.path(name)) }

func (d osDir) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(d.path(name)) }

// FS is like [Options.Dir] on the tree under dir in fsys (an embed.FS,
// say). IDs are relative to dir.
func (o Options) FS(fsys fs.FS, dir string) iter.Seq2[Doc, error] {
	return o.walk(context.Background(), fsys, dir, dir)
}

// dirKey identifies a directory for loop detection: its device and inode
// where the file system gives them, else its path.
func dirKey(fi fs.FileInfo, p string) any {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return p
}

func (o Options) walk(ctx context.Context, fsys fs.FS, dir, input string) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		stopped := false
		walked := map[any]bool{} // directories walked, by dirKey
		var walkFrom func(start string) error
		walkFrom = func(start string) error {
			return fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
				rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
				if dir == "." {
					rel = p
				}
				if ctx.Err() != nil {
					yield(Doc{}, &Error{Input: input, Offset: -1, Err: ctx.Err()})
					stopped = true
					return fs.SkipAll
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
				if d.IsDir() {
					if fi, err := fs.Stat(fsys, p); err == nil {
						walked[dirKey(fi, p)] = true
					}
					return nil
				}
				if d.Type()&fs.ModeSymlink != 0 {
					fi, err := fs.Stat(fsys, p) // follows the link
					switch {
					case err != nil:
						o.skip(Skip{Input: input, Kind: "symlink broken", Offset: -1, ID: rel})
						return nil
					case fi.IsDir() && walked[dirKey(fi, p)]:
						o.skip(Skip{Input: input, Kind: "symlink to a walked folder", Offset: -1, ID: rel})
						return nil
					case fi.IsDir():
						if err := walkFrom(p); err != nil || stopped {
							return cmp.Or(err, fs.SkipAll)
						}
						return nil
					case !fi.Mode().IsRegular():
						o.skip(Skip{Input: input, Kind: "not a regular file", Offset: -1, ID: rel})
						return nil
					}
				} else if !d.Type().IsRegular() {
					o.skip(Skip{Input: input, Kind: "not a regular file", Offset: -1, ID: rel})
					return nil
				}
				ct := fileKind(p)
				if ct == "" {
					ct = sniffHTML(fsys, p)
				}
				if ct == "" {
					o.skip(Skip{Input: input, Kind: "file " + cmp.Or(fileExt(p), "without extension"), Offset: -1, ID: rel})
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
		}
		err := walkFrom(dir)
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
// A read error returns the bytes read before it too.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: over the %d byte cap", ErrTooLarge, max)
	}
	return b, nil
}

// JSONL yields one document per line of r, a JSON Lines (NDJSON) stream of
// objects. f names the fields (see [JSONLFields]; by default html, then
// text, content, raw_content or body). The body is the first html field
// that is a non-empty string (ContentType "text/html"), else the first
// such text field: "text/html" if it starts with a doctype or <html> tag,
// else "text/plain"; either with "; charset=utf-8", since a JSON string
// holds Unicode whatever charset the page's <meta> names. The id may be a
// string or a number; without one the ID is the line number in decimal. A
// popularity field, if present, must be a number. A UTF-8 byte order mark
// before the first line, a CR before a line's LF and blank lines are
// skipped; a UTF-16 byte order mark makes the stream UTF-16. A line that
// is not a JSON object, has no html or text, or is longer than MaxLineSize
// yields an error naming its line number, and the walk goes on.
func (o Options) JSONL(r io.Reader, f JSONLFields) iter.Seq2[Doc, error] {
	return o.jsonl(r, f, "")
}

func (o Options) jsonl(r io.Reader, f JSONLFields, input string) iter.Seq2[Doc, error] {
	f = f.withDefaults()
	return func(yield func(Doc, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		// A UTF-8 byte order mark (Python's utf-8-sig, Windows tools) is
		// no part of the first record; one of UTF-16 (what Windows
		// PowerShell 5's > and Out-File write) says the stream is
		// UTF-16, decoded to UTF-8 here.
		switch b, _ := br.Peek(3); {
		case string(b) == "\xef\xbb\xbf":
			br.Discard(3)
		case len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff):
			br = bufio.NewReaderSize(transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder()), 64<<10)
		}
		rr := newRecordReader(f)
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
			doc, derr := rr.doc(line, n)
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
	return objectDoc(func(k string) (Field, bool) {
		raw, ok := obj[k]
		return Field{Raw: raw}, ok
	}, false, f, n)
}

// objectDoc is the document of a JSON object whose fields get returns
// (see parseJSONLine). strict reports that the raw values are valid JSON
// in valid UTF-8 (jsontext's strict reading).
func objectDoc(get func(string) (Field, bool), strict bool, f JSONLFields, n int) (Doc, error) {
	// first returns the first of keys that the record holds, not null.
	first := func(keys []string) (string, Field, bool) {
		for _, k := range keys {
			if v, ok := get(k); ok && !v.null() {
				return k, v, true
			}
		}
		return "", Field{}, false
	}
	// str returns the first of keys that holds a non-empty string.
	str := func(keys []string) ([]byte, error) {
		for _, k := range keys {
			v, ok := get(k)
			if !ok || v.null() {
				continue
			}
			s, err := v.bytes(strict)
			if err != nil {
				return nil, fmt.Errorf("field %q is not a string", k)
			}
			if len(s) > 0 {
				return s, nil
			}
		}
		return nil, nil
	}
	doc := Doc{ID: strconv.Itoa(n)}
	if k, v, ok := first(f.ID); ok {
		var num json.Number
		if v.Raw == nil {
			doc.ID = v.Str
		} else if id, err := jsonString(v.Raw); err == nil {
			doc.ID = id
		} else if err := json.Unmarshal(v.Raw, &num); err != nil {
			return Doc{}, fmt.Errorf("field %q is neither a string nor a number", k)
		} else {
			doc.ID = num.String()
		}
	}
	if k, v, ok := first(f.Popularity); ok {
		if v.Raw == nil || json.Unmarshal(v.Raw, &doc.Popularity) != nil || math.IsNaN(doc.Popularity) || math.IsInf(doc.Popularity, 0) {
			return Doc{}, fmt.Errorf("field %q is not a finite number", k)
		}
	}
	url, err := str(f.URL)
	if err != nil {
		return Doc{}, err
	}
	doc.URL = string(url)
	html, err := str(f.HTML)
	if err != nil {
		return Doc{}, err
	}
	text, err := str(f.Text)
	if err != nil {
		return Doc{}, err
	}
	// A JSON string is Unicode: a <meta charset> that a page's HTML keeps
	// names the bytes it was decoded from, not these.
	switch {
	case len(html) > 0:
		doc.Body, doc.ContentType = html, htmlUTF8
	case len(text) > 0 && looksLikeHTML(text):
		doc.Body, doc.ContentType = text, htmlUTF8
	case len(text) > 0:
		doc.Body, doc.ContentType = text, textUTF8
	default:
		return Doc{ID: doc.ID, URL: doc.URL}, fmt.Errorf("%w in %s", ErrNoBody, strings.Join(slices.Concat(f.HTML, f.Text), ", "))
	}
	return doc, nil
}

// jsonString decodes the JSON string raw, a value json.Unmarshal has
// already validated as part of its record (see jsonBytes).
func jsonString(raw json.RawMessage) (string, error) {
	b, err := jsonBytes(raw, false)
	return string(b), err
}

// jsonBytes decodes the JSON string raw, a value already validated as
// part of its record, into a new slice. A string without escapes,
// control characters or invalid UTF-8 (most text fields) is its bytes
// between the quotes, so only the others are decoded again. strict
// reports that raw is valid JSON in valid UTF-8 (read by jsontext or
// readFlat): then only an escape needs decoding, and appendUnquoted
// decodes it without checking the string again (a text field that
// Python's json.dumps wrote escapes every non-ASCII character).
func jsonBytes(raw json.RawMessage, strict bool) ([]byte, error) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		body := raw[1 : n-1]
		if strict && bytes.IndexByte(body, '\\') < 0 {
			return bytes.Clone(body), nil
		}
		if strict {
			return appendUnquoted(make([]byte, 0, len(body)), body), nil
		}
		plain := true
		for _, c := range body {
			if c < 0x20 || c == '\\' || c == '"' {
				plain = false
				break
			}
		}
		if plain && utf8.Valid(body) {
			return bytes.Clone(body), nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// looksLikeHTML reports whether a text field holds an HTML document (a
// body or content field of a crawl dump): it starts, after white space,
// with a doctype or an <html> tag.
func looksLikeHTML(b []byte) bool {
	b = bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\ufeff")), " \t\r\n")
	if len(b) > 14 {
		b = b[:14]
	}
	s := strings.ToLower(string(b))
	return strings.HasPrefix(s, "<!doctype html") || strings.HasPrefix(s, "<html")
}

// OpenContext yields the documents of the input at path, by its kind: a
// directory as [Options.Dir]; *.jsonl, *.ndjson and *.json (C4 and Dolma
// ship JSON Lines as .json.gz), each also compressed as .gz, .zst (the
// Pile) or .bz2, as [Options.JSONL] with the Fields of o; *.parquet as
// [Options.Parquet] with the Fields of o; *.warc and *.warc.gz (and Common
// Crawl's *.warc.wet.gz) as [Options.WARC], resolving revisit records by
// reading their targets again from this file or an earlier one of
// [Options.Targets]; a single .html, .htm, .xhtml, .txt or .text file as
// one Doc whose ID is path. Errors name path. The file is closed when the
// walk ends.
//
// When ctx is done the walk yields one error wrapping ctx's error and
// ends, wherever it is: opening a named pipe that has no writer yet,
// waiting for a pipe's next bytes, or skipping lines that hold no
// document. The caller may stop on ctx itself instead of reading that
// error.
func (o Options) OpenContext(ctx context.Context, path string) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		fail := func(err error) { yield(Doc{}, &Error{Input: path, Offset: -1, Err: err}) }
		fi, err := os.Stat(path)
		if err != nil {
			fail(err)
			return
		}
		if fi.IsDir() {
			for doc, err := range o.dir(ctx, path) {
				if !yield(doc, err) {
					return
				}
			}
			return
		}
		name := strings.ToLower(filepath.Base(path))
		base, comp := name, ""
		for _, ext := range []string{".gz", ".zst", ".bz2"} {
			if b, ok := strings.CutSuffix(name, ext); ok {
				base, comp = b, ext
				break
			}
		}
		var seq func(io.Reader) iter.Seq2[Doc, error]
		var ra io.ReaderAt // the open file, for revisits
		switch {
		case strings.HasSuffix(base, ".jsonl") || strings.HasSuffix(base, ".ndjson") || strings.HasSuffix(base, ".json"):
			seq = func(r io.Reader) iter.Seq2[Doc, error] { return o.jsonl(r, o.Fields, path) }
		case comp == "" && strings.HasSuffix(base, ".parquet"):
			f, err := openInput(ctx, path, fi)
			if err != nil {
				fail(err)
				return
			}
			defer f.Close()
			for doc, err := range o.parquet(f, fi.Size(), o.Fields, path) {
				if err == nil && ctx.Err() != nil {
					err = &Error{Input: path, Offset: -1, Err: ctx.Err()}
				}
				if !yield(doc, err) || ctx.Err() != nil {
					return
				}
			}
			return
		case (strings.HasSuffix(base, ".warc") || strings.HasSuffix(base, ".wet")) && (comp == "" || comp == ".gz"):
			comp = "" // package warc detects gzip itself
			seq = func(r io.Reader) iter.Seq2[Doc, error] { return o.warc(r, path, ra, 0, math.MaxInt64) }
		case comp == "" && fileKind(name) != "":
			var body []byte
			if fi.Mode().IsRegular() {
				body, err = o.readFile(osDir(filepath.Dir(path)), filepath.Base(path))
			} else {
				var f *os.File
				if f, err = openInput(ctx, path, fi); err == nil {
					body, err = readCapped(ctxReader{ctx, f}, o.maxFile())
					f.Close()
				}
			}
			if err != nil {
				fail(err)
				return
			}
			yield(Doc{ID: path, Body: body, ContentType: fileKind(name)}, nil)
			return
		default:
			fail(errors.New("unknown input kind (want a directory, .jsonl, .ndjson or .json, each also .gz, .zst or .bz2, .parquet, .warc or .warc.gz, .wet.gz, .html or .txt)"))
			return
		}
		f, err := openInput(ctx, path, fi)
		if err != nil {
			fail(err)
			return
		}
		defer f.Close()
		ra = f
		var r io.Reader = bufio.NewReaderSize(ctxReader{ctx, f}, 256<<10)
		switch comp {
		case ".gz":
			zr, err := gzip.NewReader(r)
			if err != nil {
				fail(err)
				return
			}
			r = zr
		case ".zst":
			zr, err := zstd.NewReader(r)
			if err != nil {
				fail(err)
				return
			}
			defer zr.Close()
			r = zr
		case ".bz2":
			r = bzip2.NewReader(r)
		}
		for doc, err := range seq(r) {
			if !yield(doc, err) {
				return
			}
		}
	}
}
