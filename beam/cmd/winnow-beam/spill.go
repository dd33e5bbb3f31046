package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/winnow-search/winnow/beam/pipeline"
)

// spilled is the spill directory of this run, removed by removeSpill.
var spilled struct {
	sync.Mutex
	dir string
}

// startSpill sets up the spill directory of -spill (see pipeline's
// spill.go) for a run on runner writing out, and passes it to the workers
// in the pipeline options, as the signature store too (pipeline's
// sigstore.go). auto spills on the runners whose job servers take a
// bundle's output only once the bundle is done (Flink's and Spark's batch
// runners, and any job server behind universal), beside the output so
// that it is on the output's file system; prism and Dataflow move batches
// themselves, and prism, whose workers are this process, keeps only the
// signatures in a directory beside the output.
func (c *common) startSpill(runner, out string) error {
	base := c.spill
	sigsOnly := false
	switch {
	case base == "off":
		return nil
	case base == "auto" && (runner == "dataflow" || runner == "prism" && strings.Contains(out, "://")):
		return nil
	case base == "auto" && runner == "prism":
		base, sigsOnly = filepath.Dir(out), true
	case base == "auto" && strings.Contains(out, "://"):
		return fmt.Errorf("-spill auto: the output %s is not a local path; give -spill a directory every worker shares, or -spill off", out)
	case base == "auto":
		base = filepath.Dir(out)
	}
	abs, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(abs, filepath.Base(out)+".spill-*")
	if err != nil {
		if c.spill == "auto" {
			// The directory is the output's: say so, not the flag the
			// operator left at its default.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("the output's folder %s: %w", abs, err)
		}
		return fmt.Errorf("-spill: %w", err)
	}
	spilled.Lock()
	spilled.dir = dir
	spilled.Unlock()
	beam.PipelineOptions.Set(pipeline.SigStoreOption, dir)
	if !sigsOnly {
		beam.PipelineOptions.Set(pipeline.SpillOption, dir)
	}
	return nil
}

// removeSpill removes the spill directory, if any. Workers of this
// process (LOOPBACK, prism) may still write batches into it (the job
// server stopped mid-job, Ctrl-C), and os.RemoveAll leaves the files made
// while it runs: the directory is first renamed, so that no new file can
// be made in it.
func removeSpill() {
	spilled.Lock()
	defer spilled.Unlock()
	if spilled.dir != "" {
		gone := spilled.dir + ".removed"
		if os.Rename(spilled.dir, gone) != nil {
			gone = spilled.dir
		}
		os.RemoveAll(gone)
		spilled.dir = ""
	}
}
