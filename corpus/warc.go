package corpus

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/warc"
)

// Skip describes an item of an input that holds no document and was left
// out on purpose: a WARC record that is not a page, a file that is not a
// document. It is not an error.
type Skip struct {
	// Input is the file or directory walked, or "" for a bare reader.
	Input string
	// Kind says what was skipped, from a small set of values fit to count
	// by: "warcinfo", "request", "metadata", "continuation" (WARC record
	// types), "response 404" (any status but 200, by its
	// code), "response no http" (a response block that is no HTTP
	// message, e.g. dns:), "media image/png" (a payload type that Accept
	// refuses), "resource metadata:" (a resource record whose target is
	// not an http(s) URL, by scheme, such as wget's log and arguments;
	// "conversion ..." likewise),
	// "revisit unresolved" (a revisit whose target was not read before
	// it), "file .css" (a file of a directory walk that is no document,
	// by extension), "symlink broken", "symlink to a walked folder" and
	// "not a regular file" (a named pipe, socket or device in a walk).
	Kind string
	// Offset is the WARC record's offset (see warc.Record.Offset), or -1.
	Offset int64
	// ID is the WARC-Record-ID or the file's path in the walk.
	ID string
}

// Targets remembers where the response and resource records of WARC files
// were read, so that a revisit record can be resolved to the record it
// refers to, in the same file or in one read before it. The zero value is
// ready to use; it is safe for concurrent use. Memory: three entries per
// record (by record ID, payload digest, and target URI with date), each
// naming where it lies.
//
// Files are ordered by the first time a Targets sees them (read or
// [Targets.Index]ed), and a revisit resolves only to a record before it
// in that order: a walk that reads its inputs one after the other finds
// the same targets as readers of parts of them (record ranges, read in
// any order) that share a Targets indexed beforehand in input order.
type Targets struct {
	mu    sync.Mutex
	m     map[string]target // guarded by mu; keys: record ID, "digest "+digest, "uri "+URI+" "+date
	files map[string]int    // guarded by mu; each file's place in input order
}

// target is where a document's record lies: a file and the offset that
// warc.Record.Offset gives, from which its record can be read again.
type target struct {
	path     string
	file     int // the file's place in input order (Targets.files)
	offset   int64
	stream   int64 // warc.Record.StreamOffset: orders the records of one gzip member
	recordID string
}

// before reports that t lies before the record rec of file.
func (t target) before(file int, rec *warc.Record) bool {
	if t.file != file {
		return t.file < file
	}
	return t.offset < rec.Offset || t.offset == rec.Offset && t.stream < rec.StreamOffset
}

// fileLocked returns path's place in input order, giving it the next one
// the first time.
func (t *Targets) fileLocked(path string) int {
	if t.files == nil {
		t.files = map[string]int{}
	}
	n, ok := t.files[path]
	if !ok {
		n = len(t.files)
		t.files[path] = n
	}
	return n
}

// Index adds the response and resource records of the WARC file at path
// (plain or gzip), reading its records' headers: for readers of parts of
// several WARC files, index every file first, in input order, then share
// the Targets (see [Options.WARCRange]). A damaged record is passed over,
// as a walk passes over it.
func (t *Targets) Index(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	wr, err := warc.NewReader(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	t.mu.Lock()
	t.fileLocked(path)
	t.mu.Unlock()
	for {
		rec, err := wr.Next()
		if err == io.EOF {
			return nil
		}
		var we *warc.Error
		if errors.As(err, &we) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if rec.Type == "response" || rec.Type == "resource" {
			t.add(rec, path)
		}
	}
}

func (t *Targets) add(rec *warc.Record, path string) {
	if path == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	loc := target{path: path, file: t.fileLocked(path), offset: rec.Offset, stream: rec.StreamOffset, recordID: rec.RecordID}
	if t.m == nil {
		t.m = map[string]target{}
	}
	if rec.RecordID != "" {
		t.m[rec.RecordID] = loc
	}
	if d := rec.Header.Get("WARC-Payload-Digest"); d != "" {
		if _, ok := t.m["digest "+d]; !ok { // the first capture is the original
			t.m["digest "+d] = loc
		}
	}
	if rec.TargetURI != "" {
		t.m["uri "+rec.TargetURI+" "+rec.Header.Get("WARC-Date")] = loc
	}
}

// lookup finds the target of a revisit record of file path: by
// WARC-Refers-To, then by WARC-Refers-To-Target-URI and -Date, then by its
// payload digest; only a record before the revisit counts.
func (t *Targets) lookup(rec *warc.Record, path string) (target, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	file := t.fileLocked(path)
	keys := []string{rec.Header.Get("WARC-Refers-To")}
	if u := rec.Header.Get("WARC-Refers-To-Target-URI"); u != "" {
		keys = append(keys, "uri "+strings.Trim(u, "<>")+" "+rec.Header.Get("WARC-Refers-To-Date"))
	}
	if d := rec.Header.Get("WARC-Payload-Digest"); d != "" {
		keys = append(keys, "digest "+d)
	}
	for _, k := range keys {
		if loc, ok := t.m[k]; ok && k != "" && loc.before(file, rec) {
			return loc, true
		}
	}
	return target{}, false
}

// WARC yields the documents of a WARC file (see package warc); see
// [Options.WARC]. Revisit records are resolved only by [Options.Open],
// which can read their targets again.
func (o Options) WARC(r io.Reader) iter.Seq2[Doc, error] {
	return o.warc(r, "", nil, 0, math.MaxInt64)
}

// WARCRange yields the documents of the records of the WARC file at path
// (plain or gzip) that start in the byte range [start, end), as
// [Options.Open] yields them; start must be where a record starts (for
// gzip, the start of its member; see warc.Record.Offset). Offsets are the
// file's. Revisits resolve through [Options.Targets], which must hold the
// records of every range before this one ([Targets.Index]); nil resolves
// only within the range.
func (o Options) WARCRange(path string, start, end int64) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield(Doc{}, &Error{Input: path, Offset: -1, Err: err})
			return
		}
		defer f.Close()
		r := bufio.NewReaderSize(io.NewSectionReader(f, start, math.MaxInt64-start), 256<<10)
		for doc, err := range o.warc(r, path, f, start, end) {
			if !yield(doc, err) {
				return
			}
		}
	}
}

// The WARC records that become documents:
//
//   - response records whose block is an HTTP response with status 200:
//     the body, its chunked transfer coding and Content-Encoding undone,
//     with ContentType from the HTTP Content-Type header;
//   - resource records whose WARC-Target-URI is an http or https URL: the
//     block, with the record's Content-Type (wget stores its log and
//     arguments as resource records of metadata: URIs, which are skipped);
//   - conversion records of such URLs, the same way: the text of a page
//     (Common Crawl's WET files hold only these);
//   - revisit records whose target (WARC-Refers-To, or the target URI and
//     date it names, or an earlier record with the same payload digest)
//     was read before, in this file or in an earlier input of [Options.Open]
//     that shares [Options.Targets]: the target's payload under the
//     revisit's ID and URL, or the target's skip kind if it is no page
//     (wget stores a repeated 404 as a revisit).
//
// A payload without a Content-Type is sniffed as a browser sniffs it
// (net/http.DetectContentType). Only payloads whose media type Accept
// allows become documents. Every other record (warcinfo, request,
// metadata, other statuses, other media types, unresolved revisits) is
// passed to OnSkip with its kind. A Doc's ID is the WARC-Record-ID and its
// URL the WARC-Target-URI. A damaged record, an undecodable payload or a
// body over MaxFileSize yields an error naming the record's offset, and
// the walk goes on; an input read error ends it. A compressed payload that
// ends early in a record marked WARC-Truncated (cut at the crawler's
// limit) is the page as far as it goes.
//
// Offsets in r are base bytes into the file, and the walk ends at the
// first record at or after end.
func (o Options) warc(r io.Reader, input string, ra io.ReaderAt, base, end int64) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		wr, err := warc.NewReader(r)
		if err != nil {
			yield(Doc{}, &Error{Input: input, Offset: 0, Err: err})
			return
		}
		targets := o.Targets
		if targets == nil {
			targets = &Targets{}
		}
		// far holds the revisits whose target lies too deep in its gzip
		// member to be read again for each: they are resolved together,
		// in one more read of each such member, when the walk ends.
		var far []farRevisit
	records:
		for {
			rec, err := wr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				e := &Error{Input: input, Offset: -1, Err: err}
				var we *warc.Error
				if errors.As(err, &we) {
					e.Offset, e.RecordID = base+we.Offset, we.RecordID
					if e.Offset >= end {
						break
					}
				}
				if !yield(Doc{}, e) {
					return
				}
				if we == nil {
					break records // a read error of the input ends the walk
				}
				continue
			}
			rec.Offset += base
			if rec.Offset >= end {
				break
			}
			var doc Doc
			var skip string
			switch rec.Type {
			case "revisit":
				doc, skip, err = o.revisit(rec, targets, input, ra, &far)
				if skip == revisitFar {
					continue
				}
			case "response", "resource":
				// Every capture is a possible revisit target, pages or
				// not: a revisit of a 404 is skipped as one.
				targets.add(rec, input)
				fallthrough
			default:
				doc, skip, err = o.warcDoc(rec)
			}
			if err == nil && skip == "" {
				// The block's end is checked when it is read to its
				// end: a record whose Content-Length is false is an
				// error, not a page cut at a wrong place.
				if _, derr := io.Copy(io.Discard, rec.Content); derr != nil {
					doc, err = Doc{}, derr
				}
			}
			switch {
			case err != nil:
				if !yield(Doc{}, &Error{Input: input, Offset: rec.Offset, RecordID: rec.RecordID, Err: err}) {
					return
				}
			case skip != "":
				o.skip(Skip{Input: input, Kind: skip, Offset: rec.Offset, ID: rec.RecordID})
			default:
				if !yield(doc, nil) {
					return
				}
			}
		}
		o.resolveFar(far, input, ra, yield)
	}
}

func (o Options) skip(s Skip) {
	if o.OnSkip != nil {
		o.OnSkip(s)
	}
}

// warcDoc returns the document of one record, or why it has none.
func (o Options) warcDoc(rec *warc.Record) (doc Doc, skip string, err error) {
	doc = Doc{ID: rec.RecordID, URL: rec.TargetURI, ContentType: rec.ContentType}
	var body io.Reader = rec.Content
	switch rec.Type {
	case "response":
		if canon.MediaType(rec.ContentType) != "application/http" {
			return Doc{}, "response no http", nil
		}
		status, h, b, err := warc.ParseHTTPResponse(rec.Content)
		if err != nil {
			return Doc{}, "", err
		}
		if status != 200 {
			return Doc{}, "response " + strconv.Itoa(status), nil
		}
		doc.ContentType, body = h.Get("Content-Type"), b
	case "resource", "conversion":
		if s := scheme(rec.TargetURI); s != "http" && s != "https" {
			return Doc{}, rec.Type + " " + s + ":", nil
		}
	case "":
		return Doc{}, "no type", nil
	default:
		return Doc{}, rec.Type, nil
	}
	if canon.MediaType(doc.ContentType) == "" {
		// A server that sent no Content-Type, or one without a
		// type/subtype ("text/html, text/html", "text"): a browser
		// sniffs the body (WHATWG MIME sniffing), so do we; the
		// charset that sniffing guesses is left to canon.
		sb := bufio.NewReaderSize(body, 512)
		head, _ := sb.Peek(512)
		doc.ContentType, _, _ = strings.Cut(http.DetectContentType(head), ";")
		body = sb
	}
	if mt, ok := o.accept(doc.ContentType); !ok {
		return Doc{}, "media " + mt, nil
	}
	if doc.Body, err = readCapped(body, o.maxFile()); err != nil {
		// A crawler that cuts a payload at its size or time limit says
		// so (WARC-Truncated: length, time, ...); a compressed payload so
		// cut ends early, and what it held is the page as captured. A
		// block cut short in the file is still an error: its own read
		// reports it after this.
		if !errors.Is(err, io.ErrUnexpectedEOF) || rec.Header.Get("WARC-Truncated") == "" || len(doc.Body) == 0 {
			return Doc{}, "", err
		}
	}
	return doc, "", nil
}

// scheme returns the lower-case scheme of a URI, "none" if it has none.
func scheme(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme != "" {
		return strings.ToLower(u.Scheme)
	}
	if s, _, ok := strings.Cut(uri, ":"); ok && s != "" && len(s) < 16 && !strings.ContainsAny(s, "/ ") {
		return strings.ToLower(s)
	}
	return "none"
}

// revisit resolves a revisit record to the document of its target, read
// again from its file, under the revisit's ID and URL.
//
// A target more than maxRevisitScan records into its gzip member is
// appended to far, and the skip kind is revisitFar.
func (o Options) revisit(rec *warc.Record, targets *Targets, input string, ra io.ReaderAt, far *[]farRevisit) (Doc, string, error) {
	loc, ok := targets.lookup(rec, input)
	if !ok {
		return Doc{}, "revisit unresolved", nil
	}
	if loc.path != input || ra == nil {
		f, err := os.Open(loc.path)
		if err != nil {
			return Doc{}, "", fmt.Errorf("revisit target %s: %w", loc.recordID, err)
		}
		defer f.Close()
		ra = f
	}
	tr, err := warc.NewReader(io.NewSectionReader(ra, loc.offset, math.MaxInt64-loc.offset))
	if err != nil {
		return Doc{}, "", fmt.Errorf("revisit target %s: %w", loc.recordID, err)
	}
	// Offset is the record's gzip member; in a file compressed whole, the
	// member holds records before it: read on to the target, a bounded
	// number of records.
	for range maxRevisitScan {
		trec, err := tr.Next()
		if err == io.EOF {
			return Doc{}, "revisit unresolved", nil
		}
		if err != nil {
			return Doc{}, "", fmt.Errorf("revisit target %s: %w", loc.recordID, err)
		}
		if trec.RecordID != loc.recordID {
			continue
		}
		doc, skip, err := o.warcDoc(trec)
		if err != nil || skip != "" {
			return Doc{}, skip, err
		}
		doc.ID, doc.URL = rec.RecordID, rec.TargetURI
		return doc, "", nil
	}
	*far = append(*far, farRevisit{id: rec.RecordID, url: rec.TargetURI, offset: rec.Offset, target: loc})
	return Doc{}, revisitFar, nil
}

// maxRevisitScan bounds how many records a revisit's resolution reads from
// its target's offset: one in a file compressed record by record. A
// target deeper in its gzip member (a file compressed whole) is resolved
// when the walk ends, by [Options.resolveFar]: read again for each
// revisit, such a file would cost the square of its records.
const maxRevisitScan = 256

// revisitFar is the skip kind [Options.revisit] gives a revisit whose
// target lies more than maxRevisitScan records into its gzip member; the
// walk keeps it for [Options.resolveFar] and never reports it.
const revisitFar = "revisit far"

// farRevisit is a revisit kept for [Options.resolveFar].
type farRevisit struct {
	id, url string
	offset  int64 // the revisit's record
	target  target
}

// resolveFar yields the documents of the revisits far from their targets,
// as [Options.revisit] would have: it reads each gzip member that holds
// targets once, from its start to its last wanted record, so a file
// compressed whole costs one more read however many revisits it has. The
// documents of one member come in the order of their targets.
func (o Options) resolveFar(far []farRevisit, input string, ra io.ReaderAt, yield func(Doc, error) bool) {
	type member struct {
		path   string
		offset int64
	}
	byMember := map[member][]farRevisit{}
	var order []member
	for _, r := range far {
		m := member{r.target.path, r.target.offset}
		if byMember[m] == nil {
			order = append(order, m)
		}
		byMember[m] = append(byMember[m], r)
	}
	for _, m := range order {
		if !o.resolveMember(m.path, m.offset, byMember[m], input, ra, yield) {
			return
		}
	}
}

// resolveMember reads the gzip member at offset of the file at path up to
// the last target of revisits, yielding a document for each revisit; a
// revisit whose target it never meets is reported as unresolved, in the
// order of revisits. It returns false when yield asked to stop.
func (o Options) resolveMember(path string, offset int64, revisits []farRevisit, input string, ra io.ReaderAt, yield func(Doc, error) bool) bool {
	wanted := map[string][]farRevisit{}
	for _, r := range revisits {
		wanted[r.target.recordID] = append(wanted[r.target.recordID], r)
	}
	fail := func(r farRevisit, err error) bool {
		return yield(Doc{}, &Error{Input: input, Offset: r.offset, RecordID: r.id, Err: fmt.Errorf("revisit target %s: %w", r.target.recordID, err)})
	}
	// rest reports the revisits still wanted, in their order, by report.
	rest := func(report func(farRevisit) bool) bool {
		for _, r := range revisits {
			if _, ok := wanted[r.target.recordID]; ok && !report(r) {
				return false
			}
		}
		return true
	}
	if path != input || ra == nil {
		f, err := os.Open(path)
		if err != nil {
			return rest(func(r farRevisit) bool { return fail(r, err) })
		}
		defer f.Close()
		ra = f
	}
	tr, err := warc.NewReader(bufio.NewReaderSize(io.NewSectionReader(ra, offset, math.MaxInt64-offset), 256<<10))
	if err != nil {
		return rest(func(r farRevisit) bool { return fail(r, err) })
	}
	for len(wanted) > 0 {
		trec, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var we *warc.Error
			if errors.As(err, &we) {
				continue // a damaged record, which the walk reported
			}
			return rest(func(r farRevisit) bool { return fail(r, err) })
		}
		rs, ok := wanted[trec.RecordID]
		if !ok {
			continue
		}
		delete(wanted, trec.RecordID)
		doc, skip, err := o.warcDoc(trec)
		for i, r := range rs {
			switch {
			case err != nil:
				if !fail(r, err) {
					return false
				}
			case skip != "":
				o.skip(Skip{Input: input, Kind: skip, Offset: r.offset, ID: r.id})
			default:
				d := doc
				if i > 0 {
					d.Body = slices.Clone(doc.Body) // each document its own body
				}
				d.ID, d.URL = r.id, r.url
				if !yield(d, nil) {
					return false
				}
			}
		}
	}
	return rest(func(r farRevisit) bool {
		o.skip(Skip{Input: input, Kind: "revisit unresolved", Offset: r.offset, ID: r.id})
		return true
	})
}
