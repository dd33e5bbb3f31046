package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"

	"github.com/winnow-search/winnow/beam/internal/enginetest"
)

// onJobServer points the portable runners at the project's job server of
// kind (scripts/engine: flink or spark), started for the test unless one
// runs (a test started one is stopped at the end), with the workers in this
// process (LOOPBACK). Without Java or Maven the test is skipped, unless
// CI=true, where it fails.
func onJobServer(t *testing.T, kind string) {
	t.Helper()
	endpoint := enginetest.Endpoint(t, kind)
	oldEndpoint, oldEnv, oldPar := *jobopts.Endpoint, *jobopts.EnvironmentType, *jobopts.Parallelism
	*jobopts.Endpoint, *jobopts.EnvironmentType = endpoint, "LOOPBACK"
	if kind == "flink" {
		*jobopts.Parallelism = 2
	}
	t.Cleanup(func() {
		*jobopts.Endpoint, *jobopts.EnvironmentType, *jobopts.Parallelism = oldEndpoint, oldEnv, oldPar
	})
}

// engines are the job servers the runner tests use.
var engines = []string{"flink", "spark"}

// TestEngines: the embedded sample through Flink (parallelism 2) and Spark
// (local[2]) gives the bytes `winnow dedup` writes; so it does when the
// first attempt of the write step fails (FailOnceEnv) and the runner
// retries it.
func TestEngines(t *testing.T) {
	want := dedupOutput(t)
	for _, kind := range engines {
		t.Run(kind, func(t *testing.T) {
			onJobServer(t, kind)
			got, st := beamRun{runner: kind}.run(t)
			sameLines(t, kind, got, want)
			if st.Docs != 53 || st.Clusters != 12 {
				t.Errorf("stats %+v, want 53 documents in 12 clusters", st)
			}

			marks := t.TempDir()
			t.Setenv(FailOnceEnv, marks)
			got, _ = beamRun{runner: kind}.run(t)
			if _, err := os.Stat(filepath.Join(marks, "write")); err != nil {
				t.Errorf("no failure was injected: %v", err)
			}
			sameLines(t, kind+" after a failed task", got, want)

			// As winnow-beam runs by default on a job server: batches
			// spilled, signatures in the store; and the component
			// rounds rather than one grouping.
			t.Setenv(FailOnceEnv, "")
			dir := t.TempDir()
			beam.PipelineOptions.Set(SpillOption, dir)
			beam.PipelineOptions.Set(SigStoreOption, dir)
			defer beam.PipelineOptions.Set(SpillOption, "")
			defer beam.PipelineOptions.Set(SigStoreOption, "")
			got, st = beamRun{runner: kind, o: Options{SmallEdges: -1}}.run(t)
			sameLines(t, kind+" spilled, signatures stored, in rounds", got, want)
			if st.Rounds == 0 {
				t.Errorf("stats %+v: no component round ran", st)
			}
		})
	}
}

// TestSparkOneAtATime: Beam's Spark job server runs one pipeline at a
// time. A pipeline submitted while another runs (held in its write step,
// HoldOnceEnv) fails with an error that says so and what to do; the first
// then finishes with `winnow dedup`'s bytes.
func TestSparkOneAtATime(t *testing.T) {
	want := dedupOutput(t)
	onJobServer(t, "spark")
	hold := t.TempDir()
	t.Setenv(HoldOnceEnv, hold)
	held := filepath.Join(hold, "write.pid")
	first, out := beamRun{runner: "spark"}.pipeline(t)
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), "spark", first)
		done <- err
	}()
	// However the test ends, the first pipeline is released and ended
	// before the job server goes to the next test.
	ended := false
	t.Cleanup(func() {
		if !ended {
			os.Remove(held)
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
			}
		}
	})
	limit := time.After(5 * time.Minute)
	for waited := false; !waited; {
		select {
		case err := <-done:
			ended = true
			t.Fatalf("the first pipeline ended before its write step held it: %v", err)
		case <-limit:
			t.Fatal("the first pipeline did not reach its write step in 5 minutes")
		case <-time.After(100 * time.Millisecond):
			_, err := os.Stat(held)
			waited = err == nil
		}
	}
	second, _ := beamRun{runner: "spark"}.pipeline(t)
	_, err := Run(context.Background(), "spark", second)
	if err == nil || !strings.Contains(err.Error(), "runs one pipeline at a time") {
		t.Errorf("a second pipeline while one runs: %v; want Spark's refusal, explained", err)
	}
	if err := os.Remove(held); err != nil {
		t.Fatal(err)
	}
	err = <-done
	ended = true
	if err != nil {
		t.Fatalf("the first pipeline, released: %v", err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "the first pipeline", got, want)
}
