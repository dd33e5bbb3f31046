package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/winnow-search/winnow/beam/internal/enginetest"
	"github.com/winnow-search/winnow/beam/pipeline"
)

// TestNoJobServer: an -endpoint where no job server listens, or where
// something else (an HTTP server) does, is a clear error naming the
// endpoint, soon: the Go SDK alone dialled for two minutes and said
// "context deadline exceeded".
func TestNoJobServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	for name, endpoint := range map[string]string{"closed port": closed, "HTTP server": strings.TrimPrefix(web.URL, "http://")} {
		t.Run(name, func(t *testing.T) {
			// Far above the few seconds it takes, far below the SDK's
			// two minutes.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, beamBin, "dedup", "-runner", "flink", "-endpoint", endpoint,
				"-environment_type", "LOOPBACK", "-o", filepath.Join(t.TempDir(), "out.jsonl")).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("still waiting after a minute for a job server at %s\n%s", endpoint, out)
			}
			if err == nil || !strings.Contains(string(out), "no Beam job server answers at "+endpoint) {
				t.Errorf("winnow-beam -endpoint %s: %v\n%s", endpoint, err, out)
			}
		})
	}
}

// TestInterruptCancelsJob: SIGINT to a run on Flink's job server cancels
// its job there before winnow-beam exits. Before, the job stayed RUNNING
// in the job server's list for good (and with EXTERNAL or DOCKER workers
// it ran on and wrote the output; Spark's job server refused every other
// pipeline while it ran). The write step holds its task
// (pipeline.HoldOnceEnv), so the signal lands while the job surely runs.
// Without Java or Maven it is skipped, unless CI=true.
func TestInterruptCancelsJob(t *testing.T) {
	endpoint := enginetest.Endpoint(t, "flink")
	name := fmt.Sprintf("winnow-beam-interrupt-test-%d", time.Now().UnixNano())
	hold := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cmd := exec.Command(beamBin, "dedup", "-runner", "flink", "-endpoint", endpoint, "-environment_type", "LOOPBACK",
		"-job_name", name, "-o", out)
	cmd.Env = append(os.Environ(), pipeline.HoldOnceEnv+"="+hold)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(hold, "write.pid")); err == nil {
			break
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("the run did not reach its write step in 5 minutes\n%s\n%s", log.String(), enginetest.LogTail("flink"))
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err == nil {
		t.Errorf("exit 0 after SIGINT\n%s", log.String())
	}
	if !strings.Contains(log.String(), "cancelled on the job server") {
		t.Errorf("winnow-beam does not say the job was cancelled:\n%s", log.String())
	}
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobs, err := client.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, j := range jobs.GetJobInfo() {
		if strings.HasPrefix(j.GetJobName(), strings.ReplaceAll(name, "-", "0")+"-") {
			states = append(states, j.GetState().String())
		}
	}
	if len(states) != 1 || states[0] != "CANCELLED" {
		t.Errorf("the job's states on the job server after SIGINT: %v, want [CANCELLED]\n%s", states, log.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s exists after an interrupted run", out)
	}
}

// TestCancelKilledRun: a run killed with SIGKILL cannot cancel its job,
// and with EXTERNAL workers (a `winnow-beam worker-pool`, as on a
// cluster) the job runs on without it and would write the output of a
// run its operator stopped. The name winnow-beam printed as it started
// finds the job in `winnow-beam jobs`, and `winnow-beam cancel` stops
// it. Without Java or Maven it is skipped, unless CI=true.
func TestCancelKilledRun(t *testing.T) {
	endpoint := enginetest.Endpoint(t, "flink")
	hold := t.TempDir()
	t.Setenv(pipeline.HoldOnceEnv, hold) // the pool's workers inherit it
	addr, _ := startPool(t)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cmd := exec.Command(beamBin, "dedup", "-runner", "flink", "-endpoint", endpoint,
		"-environment_type", "EXTERNAL", "-environment_config", addr, "-o", out)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// "winnow-beam dedup: job NAME on the job server at ...", printed
	// before the job is submitted; killed once the job runs.
	var name string
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if name == "" {
			if _, rest, ok := strings.Cut(log.String(), "winnow-beam dedup: job "); ok && strings.Contains(rest, " ") {
				name, _, _ = strings.Cut(rest, " ")
			}
		}
		if name != "" && jobState(t, endpoint, name) == "RUNNING" {
			break
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("no job %q running after 5 minutes\n%s\n%s", name, log.String(), enginetest.LogTail("flink"))
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	// The job goes on without its client: a worker reaches the write
	// step (held there, so the job cannot end first).
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(hold, "write.pid")); err == nil {
			break
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("the killed run's job did not reach its write step in 5 minutes (state %s)\n%s", jobState(t, endpoint, name), enginetest.LogTail("flink"))
		}
	}
	listed, err := exec.Command(beamBin, "jobs", "-endpoint", endpoint).CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)\sRUNNING\s+`+regexp.QuoteMeta(strings.ReplaceAll(name, "-", "0"))+"-").Match(listed) {
		t.Fatalf("winnow-beam jobs -endpoint %s: %v; want %s RUNNING in\n%s", endpoint, err, name, listed)
	}
	cancelled, err := exec.Command(beamBin, "cancel", "-endpoint", endpoint, name).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(cancelled), "cancelled ") {
		t.Fatalf("winnow-beam cancel -endpoint %s %s: %v\n%s", endpoint, name, err, cancelled)
	}
	st := jobState(t, endpoint, name)
	for start := time.Now(); st != "CANCELLED" && time.Since(start) < time.Minute; time.Sleep(time.Second) {
		st = jobState(t, endpoint, name)
	}
	if st != "CANCELLED" {
		t.Errorf("the job is %s a minute after winnow-beam cancel, want CANCELLED", st)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written by the cancelled job", out)
	}
	// Again: nothing left to cancel is an error naming the job.
	if again, err := exec.Command(beamBin, "cancel", "-endpoint", endpoint, name).CombinedOutput(); err == nil || !strings.Contains(string(again), name) {
		t.Errorf("cancel of an ended job: %v %s, want an error naming it", err, again)
	}
}

// jobState is the state of the job a run named name on the job server
// at endpoint, "" while there is none.
func jobState(t *testing.T, endpoint, name string) string {
	t.Helper()
	jobs, err := pipeline.Jobs(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if strings.HasPrefix(j.Name, strings.ReplaceAll(name, "-", "0")+"-") {
			return j.State
		}
	}
	return ""
}
