package pipeline

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Spilled batches. Beam's Java job servers (Flink's and Spark's batch
// runners, Beam 2.62.0) run a task's whole partition of a step as one
// bundle and take the bundle's output only after the SDK harness has
// answered that the bundle is done (SdkHarnessClient's ActiveBundle.close
// waits for the response before it drains the output), while the output
// waits in a queue of 100 data messages (BeamFnDataInboundObserver) that,
// once full, blocks the gRPC stream the harness sends on: the harness
// cannot finish the bundle, and the job stalls. The Go SDK sends at most
// about 4 MB a message, so a bundle may output about 300 MB, and a
// million pages' candidate join outputs 2.3 GB over two tasks. With a
// spill directory (SpillOption, set by winnow-beam for the portable
// runners) every batch is written to a file there and the element that
// crosses the runner is its reference: path, offset and length, a few
// dozen bytes, so no bundle comes near the limit and the job servers hold
// references, not data. The directory must be shared by every worker at
// the same path (one machine, or NFS); its files are the shuffle's data,
// removed with the directory after the job. A retried task writes new
// files and emits references to them; the files of the failed attempt are
// never read.

// SpillOption is the pipeline option (beam.PipelineOptions) that names
// the spill directory; the workers read it from the options the runner
// sends them.
const SpillOption = "winnow_spill"

// spillDir returns the spill directory, "" when batches travel inline.
func spillDir() string { return beam.PipelineOptions.Get(SpillOption) }

// spillMagic starts a reference, so that an inline batch given to a
// reader of spilled ones fails rather than being misread.
const spillMagic = "\xffspill1"

// spill writes batches to a new file in dir and returns their references.
func spill(dir string, batches [][]byte) ([][]byte, error) {
	f, err := os.CreateTemp(dir, "b-*")
	if err != nil {
		return nil, fmt.Errorf("pipeline: spill: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	refs := make([][]byte, len(batches))
	var off uint64
	for i, b := range batches {
		if _, err := w.Write(b); err != nil {
			f.Close()
			return nil, fmt.Errorf("pipeline: spill: %w", err)
		}
		refs[i] = appendRef(spillMagic, f.Name(), off, uint64(len(b)))
		off += uint64(len(b))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("pipeline: spill: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("pipeline: spill: %w", err)
	}
	return refs, nil
}

// unspill returns the batch that element b refers to when batches are
// spilled (dir not empty), reading it into buf's storage; else b itself.
func unspill(dir string, b, buf []byte) ([]byte, error) {
	if dir == "" {
		return b, nil
	}
	path, off, n, err := parseRefMagic(spillMagic, b)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: spilled batch: %w", err)
	}
	defer f.Close()
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := f.ReadAt(buf, int64(off)); err != nil {
		return nil, fmt.Errorf("pipeline: spilled batch %s at %d: %w", path, off, err)
	}
	return buf, nil
}

// appendRef encodes a reference to the n bytes at off in the file at
// path, for spill and sigWriter: the magic, the path (appendString), the
// offset and the length; parseRefMagic decodes it.
func appendRef(magic, path string, off, n uint64) []byte {
	r := appendString([]byte(magic), path)
	r = binary.AppendUvarint(r, off)
	return binary.AppendUvarint(r, n)
}

// parseRefMagic decodes a reference written by spill or sigWriter: the
// magic, the path (appendString), the offset and the length.
func parseRefMagic(magic string, b []byte) (path string, off, n uint64, err error) {
	rest, ok := strings.CutPrefix(string(b), magic)
	if !ok {
		return "", 0, 0, errBatch
	}
	path, r, err := readString([]byte(rest))
	if err != nil {
		return "", 0, 0, err
	}
	off, w := binary.Uvarint(r)
	if w <= 0 {
		return "", 0, 0, errBatch
	}
	n, w2 := binary.Uvarint(r[w:])
	if w2 <= 0 || w+w2 != len(r) {
		return "", 0, 0, errBatch
	}
	return path, off, n, nil
}
