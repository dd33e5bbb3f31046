package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxHeaderSize is the largest record header, version line included, that
// [Reader] accepts; a longer header is [ErrMalformed]. It bounds the memory
// a hostile file can make the reader use.
const MaxHeaderSize = 1 << 20

// maxLine is the longest header line; it is also the read buffer's size.
const maxLine = 64 << 10

// ErrTruncated is wrapped by the error for a record whose header or block
// ends before it is complete: the input ends, or a gzip member ends and the
// next member starts a new record.
var ErrTruncated = errors.New("warc: truncated record")

// ErrMalformed is wrapped by the error for a record that cannot be parsed: a
// bad version line, a bad or oversized header, a missing or invalid
// Content-Length, damaged gzip data, or bytes between records that are not a
// record.
var ErrMalformed = errors.New("warc: malformed record")

// Error describes a damaged record. It wraps [ErrTruncated] or
// [ErrMalformed], and the underlying cause if there is one.
type Error struct {
	// Offset is where the record starts, as in [Record.Offset].
	Offset int64
	// RecordID is the record's WARC-Record-ID when the header was read, else "".
	RecordID string
	// Kind is ErrTruncated or ErrMalformed.
	Kind error
	// Msg says what is wrong.
	Msg string
	// Err is the underlying cause (a gzip error, say), or nil.
	Err error
}

// Error formats e as "warc: truncated record at offset N (record ID): msg".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v at offset %d", e.Kind, e.Offset)
	if e.RecordID != "" {
		fmt.Fprintf(&b, " (record %s)", e.RecordID)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns Kind and, if set, Err.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Record is one WARC record. Its fields other than Content are copied from
// the header for convenience; Header has them all.
type Record struct {
	// Version is the version line without "WARC/": "1.0" or "1.1".
	Version string
	// Type is WARC-Type: "warcinfo", "response", "resource", "request",
	// "metadata", "revisit", "conversion" or "continuation".
	Type string
	// TargetURI is WARC-Target-URI, without the angle brackets that WARC/1.0
	// writers such as wget put around it.
	TargetURI string
	// Date is WARC-Date; zero if absent or not a W3C/ISO 8601 date.
	Date time.Time
	// RecordID is WARC-Record-ID as written, e.g. "<urn:uuid:...>".
	RecordID string
	// ContentType is the record's Content-Type, e.g.
	// "application/http; msgtype=response"; "" if absent.
	ContentType string
	// ContentLength is the block's length in bytes.
	ContentLength int64
	// Header holds every named field; keys are canonical
	// (textproto.CanonicalMIMEHeaderKey), so use Header.Get("WARC-Type").
	Header textproto.MIMEHeader
	// Content reads the block: exactly ContentLength bytes, then io.EOF. If
	// the input ends early, Read returns an error wrapping [ErrTruncated].
	// Content is valid until the next call to [Reader.Next].
	Content io.Reader
	// Offset is where the record starts in the input: for plain input, the
	// byte offset of its version line; for gzip input, the byte offset of
	// the gzip member in which the record starts, which for record-at-time
	// compression is the record's own member, as a CDX index records it.
	Offset int64
	// StreamOffset is the byte offset of the version line in the
	// decompressed stream; equal to Offset for plain input.
	StreamOffset int64
}

// A member is the start of a gzip member: dec in decompressed stream
// bytes, raw in input bytes.
type member struct{ dec, raw int64 }

// countReader counts the bytes read from r and keeps its first error other
// than io.EOF, which tells input failures from format errors.
type countReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// stream is the decompressed input as one byte stream. For gzip input
// every Read returns bytes of one member only, and a member's start is
// recorded in members before any of its bytes are returned.
type stream struct {
	cr      *countReader
	raw     *bufio.Reader // over cr
	gz      *gzip.Reader  // nil for plain input
	open    bool          // a gzip member is being read
	dec     int64         // bytes returned so far
	members []member
	// back holds decompressed bytes to return again before any new
	// ones, after a block that overran its record (see Reader.resync);
	// they were counted in dec when first returned.
	back []byte
	// garbage counts input bytes skipped between gzip members; garbageAt is
	// the offset of the first.
	garbage, garbageAt int64

	// A gzip member cut short runs into the next member, whose bytes the
	// inflater eats as its own before it fails. To find that member, the
	// raw bytes of the open member are kept (replay, up to maxReplay) and,
	// after a failure, the bytes from the next gzip header inside it on
	// are read again (src.pending).
	src       *rawSource
	recording bool   // replay is being filled
	replayOK  bool   // replay holds every raw byte since memberRaw
	replay    []byte // raw bytes from memberRaw on, as read from src
	memberRaw int64  // raw offset of the open member
}

// maxReplay bounds the raw bytes kept of one gzip member for resync; a
// larger damaged member loses the members its inflater ran into.
const maxReplay = 4 << 20

// rawSource is the input under the raw buffer: bytes to read again first,
// then the input. It records what it returns while the stream records.
type rawSource struct {
	s       *stream
	pending []byte
}

func (r *rawSource) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(r.pending) > 0 {
		n = copy(p, r.pending)
		r.pending = r.pending[n:]
	} else {
		n, err = r.s.cr.Read(p)
	}
	if s := r.s; s.recording && n > 0 {
		if len(s.replay)+n > maxReplay {
			s.recording, s.replayOK = false, false
		} else {
			s.replay = append(s.replay, p[:n]...)
		}
	}
	return n, err
}

// rewind, after the open member failed, makes the raw input resume at the
// first gzip header after the member's start that the inflater consumed,
// if there is one and the member's bytes were kept.
func (s *stream) rewind() {
	s.recording = false
	consumed := s.rawPos() - s.memberRaw
	if !s.replayOK || consumed < 4 || consumed > int64(len(s.replay)) {
		return
	}
	k := bytes.Index(s.replay[1:consumed], gzipMagic)
	if k < 0 {
		return
	}
	k++
	// The raw buffer holds replay[consumed:]; pending what follows it.
	pending := make([]byte, 0, len(s.replay)-k+len(s.src.pending))
	pending = append(append(pending, s.replay[k:]...), s.src.pending...)
	s.src.pending = pending
	s.raw.Reset(s.src)
}

var gzipMagic = []byte{0x1f, 0x8b, 8}

func (s *stream) rawPos() int64 {
	return s.cr.n - int64(s.raw.Buffered()) - int64(len(s.src.pending))
}

func (s *stream) Read(p []byte) (int, error) {
	if len(s.back) > 0 {
		n := copy(p, s.back)
		s.back = s.back[n:]
		return n, nil
	}
	if s.gz == nil {
		n, err := s.raw.Read(p)
		s.dec += int64(n)
		return n, err
	}
	for {
		if !s.open {
			if err := s.openMember(); err != nil {
				return 0, err
			}
		}
		n, err := s.gz.Read(p)
		s.dec += int64(n)
		switch {
		case err == io.EOF:
			s.open, s.recording = false, false
			if n > 0 {
				return n, nil
			}
		case err != nil:
			// The member is damaged: report it once, then go on with
			// the next member, which may start inside what it consumed.
			s.open = false
			if s.cr.err != nil {
				return n, s.cr.err
			}
			s.rewind()
			return n, err
		default:
			if n > 0 {
				return n, nil
			}
		}
	}
}

// openMember starts the next gzip member, skipping any bytes before it.
func (s *stream) openMember() error {
	for {
		b, err := s.raw.Peek(3)
		if len(b) == 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 {
			start := s.rawPos()
			buf, _ := s.raw.Peek(s.raw.Buffered())
			s.replay = append(s.replay[:0], buf...)
			s.recording, s.replayOK, s.memberRaw = true, true, start
			if err := s.gz.Reset(s.raw); err == nil {
				s.gz.Multistream(false)
				s.open = true
				s.members = append(s.members, member{dec: s.dec, raw: start})
				return nil
			}
			s.recording = false
			if s.cr.err != nil {
				return s.cr.err
			}
			// Not a member after all: skip what the header read took.
			if s.rawPos() == start {
				s.raw.Discard(1)
			}
			s.skipped(start, s.rawPos()-start)
			continue
		}
		if len(b) == 0 {
			if err == nil {
				err = io.EOF
			}
			return err
		}
		if err != nil && err != io.EOF {
			return err
		}
		// Skip to the next possible magic byte.
		buf, _ := s.raw.Peek(s.raw.Buffered())
		i := bytes.IndexByte(buf[1:], 0x1f) + 1
		if i == 0 {
			i = len(buf)
		}
		if len(b) < 3 {
			i = len(b)
		}
		start := s.rawPos()
		s.raw.Discard(i)
		s.skipped(start, int64(i))
	}
}

func (s *stream) skipped(at, n int64) {
	if s.garbage == 0 {
		s.garbageAt = at
	}
	s.garbage += n
}

// Reader reads WARC records from an input stream. Use [NewReader] to make
// one. A Reader is not safe for concurrent use.
//
// After an error that wraps [ErrTruncated] or [ErrMalformed], the next call
// to [Reader.Next] resumes with the next record: for gzip input the record
// that starts the next gzip member (or the next "WARC/1." line in the same
// member), for plain input the next line that starts with "WARC/1.". Any
// other error comes from the input itself and is returned by every later
// call.
type Reader struct {
	s    stream
	br   *bufio.Reader // over s
	blk  *block        // the current record's block, until Next
	err  error         // sticky input error
	line []byte        // header line being assembled across gzip members

	// quiet is set after a damaged record, so the rest of that record is
	// skipped silently rather than reported as garbage.
	quiet bool

	// peekErr is an input error that a look ahead met, for the next fill.
	peekErr error

	// body keeps maxResync bytes of the current block from the first line
	// that may start a version line on, to find the records a block that
	// overruns its record swallowed.
	body []byte
}

// maxResync bounds the bytes of one block kept to recover the records
// that a too large Content-Length swallowed: the record after a lying one
// is found when it starts within this many bytes of the first line in
// the lying block that starts with "WARC/1.".
const maxResync = 8 << 20

// NewReader returns a Reader of the WARC file that r yields, plain or
// gzip-compressed (detected from the first bytes). It reads the first
// bytes of r and returns their read error, if any; empty input is not an
// error: the first [Reader.Next] returns io.EOF.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{}
	rd.s.cr = &countReader{r: r}
	rd.s.src = &rawSource{s: &rd.s}
	rd.s.raw = bufio.NewReaderSize(rd.s.src, maxLine)
	b, err := rd.s.raw.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("warc: %w", err)
	}
	if len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b {
		rd.s.gz = new(gzip.Reader)
		rd.br = bufio.NewReaderSize(&rd.s, maxLine)
	} else {
		// Plain input: the input buffer is the line buffer too.
		rd.br = rd.s.raw
	}
	return rd, nil
}

// pos is the decompressed stream offset of the next byte to be read.
func (r *Reader) pos() int64 {
	if r.s.gz == nil {
		return r.s.rawPos()
	}
	return r.s.dec - int64(r.br.Buffered()) - int64(len(r.s.back))
}

// boundaryAfter returns the first gzip member start strictly after pos.
func (r *Reader) boundaryAfter(pos int64) (int64, bool) {
	for _, m := range r.s.members {
		if m.dec > pos {
			return m.dec, true
		}
	}
	return 0, false
}

// offset maps a stream offset to a Record.Offset.
func (r *Reader) offset(pos int64) int64 {
	if r.s.gz == nil {
		return pos
	}
	off := int64(0)
	for _, m := range r.s.members {
		if m.dec > pos {
			break
		}
		off = m.raw
	}
	return off
}

// prune forgets member starts before the one holding pos.
func (r *Reader) prune(pos int64) {
	i := 0
	for i+1 < len(r.s.members) && r.s.members[i+1].dec <= pos {
		i++
	}
	if i > 0 {
		r.s.members = append(r.s.members[:0], r.s.members[i:]...)
	}
}

// fill makes sure at least one byte is buffered. It returns io.EOF at the
// end of input, and a damaged member's error once.
func (r *Reader) fill() error {
	if r.br.Buffered() > 0 {
		return nil
	}
	if err := r.peekErr; err != nil {
		r.peekErr = nil
		return err
	}
	_, err := r.br.Peek(1)
	return err
}

// chunk returns the buffered bytes up to the next member start.
func (r *Reader) chunk() []byte {
	buf, _ := r.br.Peek(r.br.Buffered())
	if b, ok := r.boundaryAfter(r.pos()); ok && b-r.pos() < int64(len(buf)) {
		buf = buf[:b-r.pos()]
	}
	return buf
}

// atNewRecordMember reports whether pos starts a gzip member whose data
// begins with a version line, which ends any record in progress.
func (r *Reader) atNewRecordMember(pos int64) bool {
	if r.s.gz == nil {
		return false
	}
	found := false
	for _, m := range r.s.members {
		if m.dec == pos {
			found = true
		}
	}
	if !found {
		return false
	}
	b, _ := r.br.Peek(len("WARC/1."))
	return bytes.HasPrefix(b, []byte("WARC/1."))
}

// classify turns an error met while reading into a record error of kind
// kind, or returns it unchanged (and sticky) when the input failed.
func (r *Reader) classify(err error, start int64, id, msg string) error {
	if r.s.cr.err != nil {
		r.err = fmt.Errorf("warc: %w", r.s.cr.err)
		return r.err
	}
	r.quiet = true
	kind := ErrMalformed
	cause := err
	switch {
	case err == io.EOF:
		kind, cause = ErrTruncated, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		kind = ErrTruncated
		msg += " (gzip data ends)"
	}
	return &Error{Offset: r.offset(start), RecordID: id, Kind: kind, Msg: msg, Err: cause}
}

// Next returns the next record. At the end of input it returns nil,
// io.EOF. If the previous record's Content was not read to its end, Next
// skips the rest.
//
// A damaged record gives an error wrapping [ErrTruncated] or
// [ErrMalformed] (an [*Error] naming its offset and record ID), and the
// following call resumes at the next record. A truncated block is
// reported once: by Content's Read when the caller reads it to the end,
// otherwise by the Next call that skips it. Bytes between records that are
// not a record (other than blank lines) are reported as one ErrMalformed
// error before the record that follows them.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	if b := r.blk; b != nil {
		r.blk = nil
		if err := b.skip(); err != nil && !b.reported {
			return nil, err
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	start, err := r.sync()
	if err != nil {
		return nil, err
	}
	if start < 0 {
		// Garbage was reported; the next call finds the record at once.
		return nil, r.garbageError()
	}
	r.prune(start)
	rec, err := r.readHeader(start)
	if err != nil {
		return nil, err
	}
	r.quiet = false
	r.body = r.body[:0]
	r.blk = &block{r: r, rec: rec, start: start, bodyStart: r.pos(), left: rec.ContentLength, checked: start,
		keepFrom: -1, lineStart: true}
	rec.Content = r.blk
	return rec, nil
}

// garbage state for the error sync reports.
func (r *Reader) garbageError() error {
	n, at := r.s.garbage, r.s.garbageAt
	r.s.garbage = 0
	return &Error{Offset: at, Kind: ErrMalformed, Msg: fmt.Sprintf("%d bytes that are not a record skipped", n)}
}

// sync skips to the next version line. It returns the stream offset of
// the line, or -1 if garbage was skipped and must be reported first.
func (r *Reader) sync() (int64, error) {
	var garbage int64 // decompressed garbage bytes
	for {
		err := r.fill()
		if err == io.EOF {
			if r.reportGarbage(&garbage) {
				return -1, nil
			}
			return 0, io.EOF
		}
		if err != nil {
			// A damaged gzip member between records.
			e := r.classify(err, r.pos(), "", "damaged gzip member")
			r.s.garbage = 0
			return 0, e
		}
		pos := r.pos()
		buf := r.chunk()
		// Blank lines (and NULs some writers pad with) are no garbage.
		i := 0
		for i < len(buf) && (buf[i] == '\r' || buf[i] == '\n' || buf[i] == ' ' || buf[i] == '\t' || buf[i] == 0) {
			i++
		}
		if i > 0 {
			r.br.Discard(i)
			continue
		}
		if len(buf) < len(versionPrefix) {
			// Take more, up to the member's end, to decide.
			r.br.Peek(len(versionPrefix))
			buf = r.chunk()
		}
		if bytes.HasPrefix(buf, versionPrefix) {
			if r.reportGarbage(&garbage) {
				return -1, nil
			}
			return pos, nil
		}
		// Garbage up to the end of this line, or of the chunk.
		n := len(buf)
		if j := bytes.IndexByte(buf, '\n'); j >= 0 {
			n = j + 1
		}
		if !r.quiet {
			if garbage == 0 && r.s.garbage == 0 {
				r.s.garbageAt = r.offset(pos)
			}
			garbage += int64(n)
		}
		r.br.Discard(n)
	}
}

var versionPrefix = []byte("WARC/1.")

func (r *Reader) reportGarbage(stream *int64) bool {
	if r.quiet {
		r.s.garbage = 0
		r.quiet = false
		return false
	}
	r.s.garbage += *stream
	*stream = 0
	return r.s.garbage > 0
}

// readLine returns the next line of the header of the record at start,
// without its line ending. cut is true if a new record starts before the
// line ends: a version line in its place, or a gzip member that starts
// with one. The slice is valid until the next call.
func (r *Reader) readLine(start int64) (line []byte, cut bool, err error) {
	r.line = r.line[:0]
	for {
		if err := r.fill(); err != nil {
			return nil, false, err
		}
		pos := r.pos()
		if pos != start {
			if r.atNewRecordMember(pos) {
				return r.line, true, nil
			}
			if len(r.line) == 0 {
				if b, _ := r.br.Peek(len(versionPrefix)); bytes.HasPrefix(b, versionPrefix) {
					return r.line, true, nil
				}
			}
		}
		buf := r.chunk()
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			r.line = append(r.line, buf[:i]...)
			r.br.Discard(i + 1)
			if len(r.line) > maxLine {
				return nil, false, errLineTooLong
			}
			break
		}
		r.line = append(r.line, buf...)
		r.br.Discard(len(buf))
		if len(r.line) > maxLine {
			return nil, false, errLineTooLong
		}
	}
	return bytes.TrimSuffix(r.line, []byte("\r")), false, nil
}

var errLineTooLong = errors.New("header line too long")

// readHeader reads a record's version line and header.
func (r *Reader) readHeader(start int64) (*Record, error) {
	line, _, err := r.readLine(start)
	if err != nil {
		return nil, r.classify(err, start, "", "reading version line")
	}
	v, ok := strings.CutPrefix(string(line), "WARC/")
	if !ok || (v != "1.0" && v != "1.1") {
		return nil, r.classify(nil, start, "", fmt.Sprintf("bad version line %.40q", line))
	}
	rec := &Record{Version: v, Header: make(textproto.MIMEHeader), Offset: r.offset(start), StreamOffset: start}
	size := len(line)
	var key string
	for {
		line, cut, err := r.readLine(start)
		if err != nil || cut {
			if err == errLineTooLong {
				return nil, r.classify(nil, start, rec.Header.Get("WARC-Record-ID"), "header line over 64 KiB")
			}
			if err == nil {
				err = io.EOF
			}
			return nil, r.classify(err, start, rec.Header.Get("WARC-Record-ID"), "header ends early")
		}
		size += len(line) + 2
		if size > MaxHeaderSize {
			return nil, r.classify(nil, start, rec.Header.Get("WARC-Record-ID"), "header over 1 MiB")
		}
		if len(line) == 0 {
			break
		}
		if key, err = addField(rec.Header, key, line); err != nil {
			return nil, r.classify(nil, start, rec.Header.Get("WARC-Record-ID"), err.Error())
		}
	}
	h := rec.Header
	rec.Type = h.Get("WARC-Type")
	rec.RecordID = h.Get("WARC-Record-ID")
	rec.ContentType = h.Get("Content-Type")
	rec.TargetURI = strings.TrimSuffix(strings.TrimPrefix(h.Get("WARC-Target-URI"), "<"), ">")
	if d := h.Get("WARC-Date"); d != "" {
		rec.Date, _ = time.Parse(time.RFC3339Nano, d)
	}
	cl := h.Get("Content-Length")
	if cl == "" {
		return nil, r.classify(nil, start, rec.RecordID, "no Content-Length")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
	if err != nil || n < 0 {
		return nil, r.classify(nil, start, rec.RecordID, fmt.Sprintf("bad Content-Length %.40q", cl))
	}
	rec.ContentLength = n
	return rec, nil
}

// addField adds one header line to h. A line that starts with a space or
// tab continues the previous field (line folding, allowed by WARC/1.0 and
// WARC/1.1 as by RFC 2616). It returns the field's key.
func addField(h textproto.MIMEHeader, prev string, line []byte) (string, error) {
	if line[0] == ' ' || line[0] == '\t' {
		if prev == "" {
			return "", errors.New("continuation line without a field")
		}
		vs := h[prev]
		vs[len(vs)-1] += " " + strings.TrimSpace(string(line))
		return prev, nil
	}
	name, value, ok := bytes.Cut(line, []byte(":"))
	name = bytes.TrimSpace(name)
	if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
		return "", fmt.Errorf("bad header line %.40q", line)
	}
	key := textproto.CanonicalMIMEHeaderKey(string(name))
	h[key] = append(h[key], string(bytes.TrimSpace(value)))
	return key, nil
}

// block reads a record's block from the Reader's stream.
type block struct {
	r     *Reader
	rec   *Record
	start int64 // stream offset of the record
	// bodyStart is the stream offset of the block's first byte.
	bodyStart int64
	left      int64 // bytes of the block not yet read
	// keepFrom is where in the block the Reader's body starts, -1 until
	// a line of the block may start a version line.
	keepFrom  int64
	lineStart bool  // the next byte of the block starts a line
	ended     bool  // the bytes after the block were checked
	checked   int64 // last member start checked for a new record
	err       error // error returned once left could not reach 0
	reported  bool  // err was returned by Read
}

// Read reads from the block; see [Record.Content].
func (b *block) Read(p []byte) (int, error) {
	if b.err != nil {
		b.reported = true
		return 0, b.err
	}
	if b.left == 0 {
		if err := b.end(); err != nil {
			b.reported = true
			return 0, err
		}
		return 0, io.EOF
	}
	if b.r.blk != b {
		return 0, errors.New("warc: read of a record's content after Next")
	}
	if len(p) == 0 {
		return 0, nil
	}
	r := b.r
	if err := r.fill(); err != nil {
		b.fail(err)
		b.reported = true
		return 0, b.err
	}
	pos := r.pos()
	if pos > b.checked {
		b.checked = pos
		if r.atNewRecordMember(pos) {
			b.fail(io.EOF)
			b.reported = true
			return 0, b.err
		}
	}
	buf := r.chunk()
	n := copy(p[:min(int64(len(p)), b.left)], buf)
	b.keep(buf[:n])
	r.br.Discard(n)
	b.left -= int64(n)
	return n, nil
}

// keep adds p, the next bytes of the block, to the Reader's body, up to
// maxResync, from the first line that starts with "WARC/1." (or with a
// part of it that p ends in) on; blocks without one are only scanned.
func (b *block) keep(p []byte) {
	if len(p) == 0 {
		return
	}
	r := b.r
	served := b.rec.ContentLength - b.left // block bytes before p
	if b.keepFrom < 0 {
		i := versionCandidate(p, b.lineStart)
		b.lineStart = p[len(p)-1] == '\n'
		if i < 0 {
			return
		}
		b.keepFrom, p = served+int64(i), p[i:]
	}
	if k := min(len(p), maxResync-len(r.body)); k > 0 {
		r.body = append(r.body, p[:k]...)
	}
}

// versionCandidate returns the first position in p that starts a line
// (p starts one when lineStart) and a version line, or the part of one
// that p ends in; -1 if none.
func versionCandidate(p []byte, lineStart bool) int {
	for off := 0; off < len(p); {
		i := bytes.Index(p[off:], versionPrefix)
		if i < 0 {
			break
		}
		i += off
		if i == 0 && lineStart || i > 0 && p[i-1] == '\n' {
			return i
		}
		off = i + 1
	}
	for k := min(len(versionPrefix)-1, len(p)); k > 0; k-- {
		i := len(p) - k
		if bytes.HasPrefix(versionPrefix, p[i:]) && (i == 0 && lineStart || i > 0 && p[i-1] == '\n') {
			return i
		}
	}
	return -1
}

func (b *block) fail(err error) {
	got := b.rec.ContentLength - b.left
	if err == io.EOF {
		if at, ok := b.resync(); ok {
			b.err = b.overrun(at)
			return
		}
	}
	b.err = b.r.classify(err, b.start, b.rec.RecordID, fmt.Sprintf("block has %d of %d bytes", got, b.rec.ContentLength))
}

// overrun is the error of a record whose Content-Length reaches past the
// next record, found at bytes into its block.
func (b *block) overrun(at int) error {
	r := b.r
	r.quiet = true
	return &Error{Offset: r.offset(b.start), RecordID: b.rec.RecordID, Kind: ErrMalformed,
		Msg: fmt.Sprintf("Content-Length %d runs past the next record, which starts %d bytes into the block; record dropped", b.rec.ContentLength, at)}
}

// end checks, once, that the block is followed by blank lines and then
// the next record or the end of the input. If it is not, the record's
// Content-Length is false: too large, and the reader goes back to the
// first record that starts inside the block; too small, and the rest of
// the record is skipped to the next version line.
func (b *block) end() error {
	if b.ended || b.err != nil {
		return b.err
	}
	b.ended = true
	r := b.r
	const look = 64
	buf, err := r.br.Peek(look)
	if err != nil && err != io.EOF {
		// Keep the error for the next fill: bufio returns it only once.
		r.peekErr = err
	}
	i, newlines := 0, 0
	for i < len(buf) && (buf[i] == '\r' || buf[i] == '\n' || buf[i] == ' ' || buf[i] == '\t' || buf[i] == 0) {
		if buf[i] == '\n' {
			newlines++
		}
		i++
	}
	rest := buf[i:]
	switch {
	case len(rest) == 0, // the end of the input, or blank padding
		newlines >= 2, // the record's end: what follows is a record or garbage that sync reports
		bytes.HasPrefix(rest, versionPrefix),
		len(rest) < len(versionPrefix) && bytes.HasPrefix(versionPrefix, rest) && err == io.EOF:
		return nil
	}
	if at, ok := b.resync(); ok {
		b.err = b.overrun(at)
		return b.err
	}
	r.quiet = true
	b.err = &Error{Offset: r.offset(b.start), RecordID: b.rec.RecordID, Kind: ErrMalformed,
		Msg: fmt.Sprintf("Content-Length %d ends the block inside the record, not before the next one; record dropped", b.rec.ContentLength)}
	return b.err
}

// resync looks for a version line at the start of a line of the kept
// block; if one is there and every byte from it up to the read position
// was kept, the reader goes back to it and resync returns its position
// in the block and true.
func (b *block) resync() (int, bool) {
	r := b.r
	got := b.rec.ContentLength - b.left
	if b.keepFrom < 0 || int64(len(r.body)) != got-b.keepFrom || r.pos() != b.bodyStart+got {
		return 0, false // no version line, or bytes were not kept
	}
	at := -1
	for i := 0; i < len(r.body); {
		if isVersionLine(r.body[i:]) {
			at = i
			break
		}
		j := bytes.IndexByte(r.body[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if at < 0 {
		return 0, false
	}
	back := slices.Clip(r.body[at:])
	if n := r.br.Buffered(); n > 0 {
		buffered, _ := r.br.Peek(n)
		back = append(back, buffered...)
	}
	if r.s.gz == nil {
		r.s.src.pending = append(back, r.s.src.pending...)
		r.br.Reset(r.s.src)
	} else {
		r.s.back = append(back, r.s.back...)
		r.br.Reset(&r.s)
	}
	r.body = nil // back holds it now
	b.left = 0
	return int(b.keepFrom) + at, true
}

// isVersionLine reports whether b starts with a WARC/1.0 or WARC/1.1
// version line.
func isVersionLine(b []byte) bool {
	for _, v := range []string{"WARC/1.0\r\n", "WARC/1.1\r\n", "WARC/1.0\n", "WARC/1.1\n"} {
		if bytes.HasPrefix(b, []byte(v)) {
			return true
		}
	}
	return false
}

// skip discards the rest of the block.
func (b *block) skip() error {
	for b.left > 0 && b.err == nil {
		r := b.r
		if err := r.fill(); err != nil {
			b.fail(err)
			break
		}
		pos := r.pos()
		if pos > b.checked {
			b.checked = pos
			if r.atNewRecordMember(pos) {
				b.fail(io.EOF)
				break
			}
		}
		buf := r.chunk()
		n := min(int64(len(buf)), b.left)
		b.keep(buf[:n])
		r.br.Discard(int(n))
		b.left -= n
	}
	if b.err == nil && b.left == 0 {
		return b.end()
	}
	return b.err
}
