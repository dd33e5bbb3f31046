package indextag

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// checkpointVersion is the format of the checkpoint file; another is
// refused.
const checkpointVersion = 1

// The checkpoint is a JSON Lines file: a header, one line per document
// read (with its version and signature), a "read" line once every
// document is in, one line per acknowledged write batch, and a "done"
// line. Lines are appended; the read line and each write line are synced
// before the job goes on, so after kill -9 the file holds at least what
// the engine acknowledged, less at most the batch in flight (which then
// conflicts with itself on resume and is re-read, never written twice).
// A torn last line is ignored.

// ckptHeader identifies a run: a checkpoint of another engine, index,
// incremental selection or settings is refused.
type ckptHeader struct {
	Format      int    `json:"format"`
	Engine      string `json:"engine"`
	Kind        string `json:"kind"`
	Index       string `json:"index"`
	Since       string `json:"since,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

// ckptLine is one line after the header.
type ckptLine struct {
	// K is "doc", "read", "wrote" or "done".
	K string `json:"k"`
	// A document read.
	ID     string  `json:"id,omitempty"`
	Index  string  `json:"index,omitempty"`
	Route  string  `json:"routing,omitempty"`
	URL    string  `json:"url,omitempty"`
	Pop    float64 `json:"pop,omitempty"`
	Ver    version `json:"ver,omitzero"`
	Sig    []byte  `json:"sig,omitempty"`
	Cut    bool    `json:"cut,omitempty"`
	Old    *Tags   `json:"old,omitempty"`
	Role   role    `json:"role,omitempty"`
	Tagged bool    `json:"tagged,omitempty"`
	// The documents read ("read") or written ("wrote").
	Docs int      `json:"docs,omitempty"`
	IDs  []string `json:"ids,omitempty"`
}

// checkpoint is an open checkpoint file. It is not safe for concurrent
// use.
type checkpoint struct {
	path string
	f    *os.File
	w    *bufio.Writer
	// resumed reports a run to resume: entries and written come from the
	// file.
	resumed bool
	entries []entry
	written map[string]bool
	// valid is the length of the file's complete lines.
	valid int64
}

// openCheckpoint opens the checkpoint at path: a finished one or none
// starts a new run; one whose reading finished resumes; one whose reading
// did not finish starts reading again. A file of another run is an error.
func openCheckpoint(path string, h ckptHeader) (*checkpoint, error) {
	h.Format = checkpointVersion
	ck := &checkpoint{path: path}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("indextag: checkpoint: %w", err)
	default:
		ok, err := ck.load(f, h)
		f.Close()
		if err != nil {
			return nil, err
		}
		if ok {
			// Resume: append after the last complete line (a torn one is
			// cut off).
			if ck.f, err = os.OpenFile(path, os.O_WRONLY, 0o644); err != nil {
				return nil, fmt.Errorf("indextag: checkpoint: %w", err)
			}
			if err := ck.f.Truncate(ck.valid); err != nil {
				return nil, fmt.Errorf("indextag: checkpoint: %w", err)
			}
			if _, err := ck.f.Seek(ck.valid, io.SeekStart); err != nil {
				return nil, fmt.Errorf("indextag: checkpoint: %w", err)
			}
			ck.w = bufio.NewWriterSize(ck.f, 256<<10)
			ck.resumed = true
			return ck, nil
		}
	}
	if ck.f, err = os.Create(path); err != nil {
		return nil, fmt.Errorf("indextag: checkpoint: %w", err)
	}
	ck.w = bufio.NewWriterSize(ck.f, 256<<10)
	ck.entries, ck.written = nil, nil
	if err := ck.line(h); err != nil {
		return nil, err
	}
	return ck, ck.sync()
}

// load reads a checkpoint; it reports whether the run it records is to be
// resumed.
func (ck *checkpoint) load(r io.Reader, want ckptHeader) (bool, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	first, err := br.ReadBytes('\n')
	if err != nil {
		return false, nil // no complete header: nothing was recorded
	}
	var h ckptHeader
	if err := json.Unmarshal(first, &h); err != nil || h.Format != checkpointVersion {
		return false, fmt.Errorf("indextag: checkpoint %s is not a winnow index checkpoint of format %d; remove it or give another -checkpoint", ck.path, checkpointVersion)
	}
	if h != want {
		return false, fmt.Errorf("indextag: checkpoint %s is of another run (%s %s, since %q, settings %s); remove it or give another -checkpoint", ck.path, h.Engine, h.Index, h.Since, h.Fingerprint)
	}
	read := false
	ck.written = map[string]bool{}
	ck.valid = int64(len(first))
	for {
		b, err := br.ReadBytes('\n')
		if err != nil {
			break // EOF, or a torn last line
		}
		var l ckptLine
		if json.Unmarshal(b, &l) != nil {
			break
		}
		ck.valid += int64(len(b))
		switch l.K {
		case "doc":
			e := entry{ref: ref{id: l.ID, index: l.Index, routing: l.Route}, url: l.URL, popularity: l.Pop, ver: l.Ver, cut: l.Cut, role: l.Role, tagged: l.Tagged}
			if l.Old != nil {
				e.old = *l.Old
			}
			if len(l.Sig) > 0 {
				if err := e.sig.UnmarshalBinary(l.Sig); err != nil {
					return false, fmt.Errorf("indextag: checkpoint %s: document %s: %w", ck.path, l.ID, err)
				}
			}
			ck.entries = append(ck.entries, e)
		case "read":
			read = true
		case "wrote":
			for _, id := range l.IDs {
				ck.written[id] = true
			}
		case "done":
			return false, nil
		}
	}
	return read, nil
}

func (ck *checkpoint) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := ck.w.Write(b); err != nil {
		return fmt.Errorf("indextag: checkpoint: %w", err)
	}
	return nil
}

func (ck *checkpoint) sync() error {
	if err := ck.w.Flush(); err != nil {
		return fmt.Errorf("indextag: checkpoint: %w", err)
	}
	if err := ck.f.Sync(); err != nil {
		return fmt.Errorf("indextag: checkpoint: %w", err)
	}
	return nil
}

// doc records a document read.
func (ck *checkpoint) doc(e *entry) error {
	l := ckptLine{K: "doc", ID: e.id, Index: e.index, Route: e.routing, URL: e.url, Pop: e.popularity, Ver: e.ver, Cut: e.cut, Role: e.role, Tagged: e.tagged}
	if e.tagged {
		old := e.old
		l.Old = &old
	}
	b, err := e.sig.MarshalBinary()
	if err != nil {
		return err
	}
	l.Sig = b
	return ck.line(l)
}

// readDone records that every document is read.
func (ck *checkpoint) readDone(n int) error {
	if err := ck.line(ckptLine{K: "read", Docs: n}); err != nil {
		return err
	}
	return ck.sync()
}

// wrote records documents the engine acknowledged.
func (ck *checkpoint) wrote(ids []string) error {
	if err := ck.line(ckptLine{K: "wrote", IDs: ids}); err != nil {
		return err
	}
	return ck.sync()
}

// finish records the end of the run.
func (ck *checkpoint) finish() error {
	if err := ck.line(ckptLine{K: "done"}); err != nil {
		return err
	}
	return ck.sync()
}

func (ck *checkpoint) close() {
	if ck.f != nil {
		ck.w.Flush()
		ck.f.Close()
	}
}
