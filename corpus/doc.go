// Package corpus turns the inputs of the offline job (winnow dedup) into
// documents: a directory of HTML and text files, a JSON Lines or Parquet
// file, or a WARC file, plain or gzip-compressed.
//
// Each source is an iter.Seq2[Doc, error]. A bad item (a file over the size
// cap, a line that is not JSON, a damaged WARC record) yields an error of
// type [*Error] that names its position, and the walk goes on with the next
// item; only a failure of the input itself (a read error) ends it. Documents
// come in input order, so two walks of the same input agree.
//
// The package does not parse HTML or detect charsets: Body holds the bytes
// as stored, and ContentType says what they are.
package corpus
