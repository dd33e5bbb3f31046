// Package warc reads WARC files (ISO 28500: WARC/1.0 of 2009 and WARC/1.1
// of 2017), the archive format that crawlers such as Heritrix, wget and
// warcprox write.
//
// A WARC file is a sequence of records. Each record is a version line
// ("WARC/1.0" or "WARC/1.1"), named header fields, an empty line, a block of
// exactly Content-Length bytes, and two CRLFs:
//
//	WARC/1.1
//	WARC-Type: response
//	WARC-Target-URI: http://example.com/
//	WARC-Date: 2024-05-01T10:00:00Z
//	WARC-Record-ID: <urn:uuid:...>
//	Content-Type: application/http;msgtype=response
//	Content-Length: 1234
//
//	HTTP/1.1 200 OK ...
//
// Files are read plain or gzip-compressed: each record as its own gzip
// member, the form the standard recommends so that an index can point at a
// record, or a whole file compressed as one member. Compression is detected
// from the gzip magic bytes, not from the file name.
//
// [Reader] streams: it never holds more than one header (at most
// [MaxHeaderSize] bytes), a fixed buffer and, for gzip input, up to 4 MiB
// of the open member's compressed bytes (to resync after it) in memory,
// whatever the size of the blocks. It recovers from damaged input: a truncated or malformed record
// is reported as an error wrapping [ErrTruncated] or [ErrMalformed], and the
// following call to [Reader.Next] resumes at the next record, even one
// whose gzip member the inflater of a member cut short ran into.
// [ParseHTTPResponse] reads the HTTP message in a response record's block.
//
// The standard library's compress/gzip is used rather than
// github.com/klauspost/compress: with Multistream(false) it stops at each
// member's end, which gives the member offsets and resync points this
// package needs; measured here on testdata/wget.warc.gz, the reader runs at
// the speed of a bare gunzip of the same file, and klauspost's gzip was only
// 15-20% faster, less than HTML parsing downstream costs. Switching is an
// import change: its gzip.Reader has the same API.
//
// The package is kept over github.com/nlnwa/gowarc v1.6.0, the maintained
// Go WARC library, measured side by side (gowarc_test.go): on a 64 MiB
// WARC it reads 1.6 times as fast gzip per record (104-112 MB/s against
// 64-69) and 7 times as fast plain (1.4 GB/s against 0.19), with 18 times
// fewer bytes allocated; gowarc reads only the first record of a file
// compressed whole (1 of 11 of wget's file), recovers fewer records after
// a gzip member cut short, garbage, a corrupt member or a truncated plain
// block, with its default
// syntax policy loops for ever on a gzip member cut short, and panics on
// the 7 bytes "WARC/\n0" (found by fuzzing it in a second).
package warc
