package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// A job on a Beam job server (the flink, spark and universal runners).
// The Go SDK's runner waits two minutes for a job server that is not
// there (it dials until its deadline, whatever the answer), and when its
// context ends it leaves the job running on the job server: the job
// server's job list shows it RUNNING from then on (Beam 2.62's job
// invocation fails to tell the gone client its end, and never records
// it), Spark's refuses every other pipeline while it runs, and with
// EXTERNAL or DOCKER workers it runs to its end and writes the output
// of a run its operator stopped. So a run on a job server first asks the
// job server for its jobs (a clear error, soon, when none answers), names
// its job uniquely, and when its context ends (Ctrl-C) cancels that job
// on the job server before it returns.

// JobServerRunners are the runners that submit to a job server
// (-endpoint).
var JobServerRunners = []string{"flink", "spark", "universal"}

const (
	// jobServerWait bounds the first question to the job server.
	jobServerWait = 10 * time.Second
	// CancelWait bounds the cancellation of a job whose run was
	// interrupted: the request and the wait for the job's end.
	CancelWait = 15 * time.Second
)

// jobCount makes the job names of one process distinct.
var jobCount atomic.Int64

// JobName is a job name of this run's own, distinct from every other
// run's and this process's other jobs'.
func JobName() string {
	return fmt.Sprintf("winnow-beam-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), jobCount.Add(1))
}

// runOnJobServer runs p on the job server of runner at endpoint.
func runOnJobServer(ctx context.Context, runner, endpoint string, p *beam.Pipeline) (beam.PipelineResult, error) {
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("job server %s: %w", endpoint, err)
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	qctx, cancel := context.WithTimeout(ctx, jobServerWait)
	before, err := client.GetJobs(qctx, &jobpb.GetJobsRequest{})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w; start one (scripts/engine start %s) or give its address", noJobServer(ctx, endpoint, err), runner)
	}
	if *jobopts.JobName == "" {
		// The job server lists a job under the name it was given: a name
		// of this run's own finds its job to cancel.
		*jobopts.JobName = JobName()
		defer func() { *jobopts.JobName = "" }()
	}
	name := *jobopts.JobName
	known := map[string]bool{}
	for _, j := range before.GetJobInfo() {
		known[j.GetJobId()] = true
	}

	type result struct {
		res beam.PipelineResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Not ctx: the SDK's runner would drop the job's message stream
		// and leave the job running; the job's end, cancelled below, ends
		// this run.
		res, err := beam.Run(context.WithoutCancel(ctx), runner, p)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CancelWait)
	defer cancel()
	ids, err := cancelJobs(cctx, client, name, known)
	switch {
	case err != nil:
		return nil, fmt.Errorf("interrupted; cancelling job %s on the job server at %s failed, it may still run: %w", name, endpoint, err)
	case len(ids) == 0:
		// Not submitted yet: it may still be, so wait for the run (the
		// bound) and cancel what it submitted.
		select {
		case <-done:
			return nil, context.Cause(ctx)
		case <-time.After(time.Second):
		}
		if ids, err = cancelJobs(cctx, client, name, known); err != nil || len(ids) == 0 {
			return nil, fmt.Errorf("interrupted before job %s was submitted to %s (or it could not be cancelled: %v)", name, endpoint, err)
		}
	}
	select {
	case <-done:
	case <-cctx.Done():
		return nil, fmt.Errorf("interrupted; job %s cancelled on the job server at %s, which had not ended it after %v", ids[0], endpoint, CancelWait)
	}
	return nil, fmt.Errorf("interrupted; job %s cancelled on the job server at %s: %w", ids[0], endpoint, context.Cause(ctx))
}

// cancelJobs cancels the jobs named name that are not in known and have
// not ended, and returns their IDs.
func cancelJobs(ctx context.Context, client jobpb.JobServiceClient, name string, known map[string]bool) ([]string, error) {
	jobs, err := client.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		return nil, err
	}
	return cancelMatching(ctx, client, jobs.GetJobInfo(), func(j *jobpb.JobInfo) bool {
		return strings.HasPrefix(j.GetJobName(), jobNamePrefix(name)) && !known[j.GetJobId()]
	})
}

// cancelMatching cancels the jobs of list that match and have not
// ended, and returns their IDs.
func cancelMatching(ctx context.Context, client jobpb.JobServiceClient, list []*jobpb.JobInfo, match func(*jobpb.JobInfo) bool) ([]string, error) {
	var ids []string
	for _, j := range list {
		if ended(j.GetState()) || !match(j) {
			continue
		}
		if _, err := client.Cancel(ctx, &jobpb.CancelJobRequest{JobId: j.GetJobId()}); err != nil {
			return ids, fmt.Errorf("cancelling job %s: %w", j.GetJobId(), err)
		}
		ids = append(ids, j.GetJobId())
	}
	return ids, nil
}

// jobNamePrefix is how a Java job server's list begins the name of a job
// submitted as name: Beam's Java SDK makes the job's name of the
// application's (the Go job's name) in lower case, every other character
// than a-z and 0-9 a "0", followed by "-", the user, the time and a random
// number (JobNameFactory).
func jobNamePrefix(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '0'
		}
	}
	return string(b) + "-"
}

// ended reports a job state no job leaves.
func ended(s jobpb.JobState_Enum) bool {
	return slices.Contains([]jobpb.JobState_Enum{jobpb.JobState_DONE, jobpb.JobState_FAILED, jobpb.JobState_CANCELLED, jobpb.JobState_DRAINED, jobpb.JobState_UPDATED}, s)
}

// lostJobServer explains a job server that stopped answering mid-job,
// which the runner reports as a failure to read its metrics.
func lostJobServer(err error, endpoint string) error {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) && se.GRPCStatus().Code() == codes.Unavailable {
		return fmt.Errorf("%w\n(the job server at %s stopped answering mid-job: the job's end is unknown; see the job server's log)", err, endpoint)
	}
	return err
}

// Job is one job in a job server's list.
type Job struct {
	ID, Name, State string
	// Ended is true for a state no job leaves (done, failed,
	// cancelled, drained, updated).
	Ended bool
}

// withJobs calls fn with a client of the job server at endpoint and its
// job list, within wait (fn's calls included).
func withJobs(ctx context.Context, endpoint string, wait time.Duration, fn func(ctx context.Context, client jobpb.JobServiceClient, list []*jobpb.JobInfo) error) error {
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("job server %s: %w", endpoint, err)
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	qctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	list, err := client.GetJobs(qctx, &jobpb.GetJobsRequest{})
	if err != nil {
		return noJobServer(ctx, endpoint, err)
	}
	return fn(qctx, client, list.GetJobInfo())
}

// Jobs lists the jobs of the job server at endpoint, as it names them.
func Jobs(ctx context.Context, endpoint string) ([]Job, error) {
	var jobs []Job
	err := withJobs(ctx, endpoint, jobServerWait, func(_ context.Context, _ jobpb.JobServiceClient, list []*jobpb.JobInfo) error {
		for _, j := range list {
			jobs = append(jobs, Job{ID: j.GetJobId(), Name: j.GetJobName(), State: j.GetState().String(), Ended: ended(j.GetState())})
		}
		return nil
	})
	return jobs, err
}

// CancelJobs cancels, on the job server at endpoint, every job not ended
// whose ID is one of which, or whose name is a run's -job_name in which
// (the job server adds to it: [jobNamePrefix]), and returns the IDs it
// cancelled. It is the way to stop a run whose winnow-beam was killed
// (kill -9, a lost machine): the job server keeps such a job running.
// A name or ID that matches no running job is an error naming it.
func CancelJobs(ctx context.Context, endpoint string, which []string) ([]string, error) {
	var ids []string
	err := withJobs(ctx, endpoint, CancelWait, func(ctx context.Context, client jobpb.JobServiceClient, list []*jobpb.JobInfo) error {
		for _, w := range which {
			got, err := cancelMatching(ctx, client, list, func(j *jobpb.JobInfo) bool {
				return (j.GetJobId() == w || strings.HasPrefix(j.GetJobName(), jobNamePrefix(w))) && !slices.Contains(ids, j.GetJobId())
			})
			ids = append(ids, got...)
			if err != nil {
				return err
			}
			if len(got) == 0 {
				return fmt.Errorf("no job that has not ended is named %q or has that ID on the job server at %s (winnow-beam jobs -endpoint %s lists them)", w, endpoint, endpoint)
			}
		}
		return nil
	})
	return ids, err
}

// noJobServer says that no job server answered at endpoint.
func noJobServer(ctx context.Context, endpoint string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("no Beam job server answers at %s (-endpoint): %s", endpoint, status.Convert(err).Message())
}
