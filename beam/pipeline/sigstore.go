package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Stored signatures. A signature is most of a document's bytes (9.5 KB
// on llvm-docs, 95 % of it the token sequence that the LCS compares),
// and the dedup pipeline moves a usable document's signature through
// about six groupings: its record to the candidate join, the document to
// its component (two groupings), the representative's to the pair steps
// (two) and on to the decide step for each of its pairs. A runner holds
// and copies what crosses each grouping (prism decodes every element it
// persists, and once more after a Flatten), so most of the runner's work
// and of its garbage is signatures. With a signature store
// (SigStoreOption) signFn writes each shard's signatures once, to a file
// in the store, and what crosses is a reference (the file, offset and
// length: a few dozen bytes) that the steps comparing signatures read
// back: sigJoinFn (identical signatures, candidate keys), decideFn (the
// pairs) and clusterFn (the components). The store must be shared by
// every worker at the same path, as the spill directory (spill.go) is:
// winnow-beam puts it beside the output on prism (one process) and in the
// spill directory on the runners that spill.

// SigStoreOption is the pipeline option (beam.PipelineOptions) that names
// the signature store's directory; "" keeps signatures inline.
const SigStoreOption = "winnow_sigs"

// sigStoreDir returns the signature store's directory, "" when
// signatures travel inline.
func sigStoreDir() string { return beam.PipelineOptions.Get(SigStoreOption) }

// sigRefMagic starts a signature reference. A signature's encoding starts
// with similarity.SignatureVersion, never 0xff (a test checks), so a
// reference and a signature cannot be confused.
const sigRefMagic = "\xffsig1"

// isSigRef reports whether b is a signature's reference.
func isSigRef(b []byte) bool { return bytes.HasPrefix(b, []byte(sigRefMagic)) }

// sigWriter appends signatures to a new file of the store, created at the
// first one. Not safe for concurrent use.
type sigWriter struct {
	f   *os.File
	w   *bufio.Writer
	off uint64
}

// add writes sig to a file in dir and returns its reference.
func (s *sigWriter) add(dir string, sig []byte) ([]byte, error) {
	if s.f == nil {
		f, err := os.CreateTemp(dir, "s-*")
		if err != nil {
			return nil, fmt.Errorf("pipeline: signature store: %w", err)
		}
		s.f, s.w, s.off = f, bufio.NewWriterSize(f, 1<<20), 0
	}
	if _, err := s.w.Write(sig); err != nil {
		return nil, fmt.Errorf("pipeline: signature store: %w", err)
	}
	r := appendRef(sigRefMagic, s.f.Name(), s.off, uint64(len(sig)))
	s.off += uint64(len(sig))
	return r, nil
}

// close flushes and closes the file, if any; the references it returned
// can be read from then on. Closing twice is a no-op.
func (s *sigWriter) close() error {
	if s.f == nil {
		return nil
	}
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f, s.w = nil, nil
	if err != nil {
		return fmt.Errorf("pipeline: signature store: %w", err)
	}
	return nil
}

// sigReader reads signatures back from references, keeping the files it
// opened open until close. Not safe for concurrent use.
type sigReader struct {
	files map[string]*os.File
}

// sig returns the signature that b refers to, read into a new slice, or
// b itself when b is a signature (not a reference).
func (r *sigReader) sig(b []byte) ([]byte, error) {
	if !isSigRef(b) {
		return b, nil
	}
	path, off, n, err := parseRefMagic(sigRefMagic, b)
	if err != nil {
		return nil, err
	}
	f := r.files[path]
	if f == nil {
		if f, err = os.Open(path); err != nil {
			return nil, fmt.Errorf("pipeline: stored signature: %w", err)
		}
		if r.files == nil {
			r.files = map[string]*os.File{}
		}
		r.files[path] = f
	}
	sig := make([]byte, n)
	if _, err := f.ReadAt(sig, int64(off)); err != nil {
		return nil, fmt.Errorf("pipeline: stored signature %s at %d: %w", path, off, err)
	}
	return sig, nil
}

// close closes the files.
func (r *sigReader) close() {
	for _, f := range r.files {
		f.Close()
	}
	clear(r.files)
}

// carried returns what crosses for a signature: its reference ref when
// it is stored, else the signature sig itself.
func carried(sig, ref []byte) []byte {
	if ref != nil {
		return ref
	}
	return sig
}
