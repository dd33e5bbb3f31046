package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/container/tools"
	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
)

// runPool serves Beam's external worker pool (BeamFnExternalWorkerPool)
// on -addr: a job server submitted to with -environment_type EXTERNAL
// -environment_config ADDR asks it for each SDK harness it needs, and
// each one runs as a process of its own (this binary with --worker, as
// the Go SDK's container boot starts a harness), so that a worker can die
// alone and the runner retry its tasks. It stops on SIGINT or SIGTERM,
// killing its workers.
func runPool(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker-pool", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8098", "`host:port` the worker pool listens on (the -environment_config of the jobs)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: winnow-beam worker-pool [-addr HOST:PORT]\n\n"+
			"Serves Beam's external worker pool: submit with -environment_type EXTERNAL -environment_config HOST:PORT;\n"+
			"every SDK harness the job server starts runs as a winnow-beam process of its own.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("worker-pool: unexpected argument %q", fs.Arg(0))
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "winnow-beam-pool")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("worker-pool: %w", err)
	}
	p := &pool{bin: self, dir: dir, workers: map[string]*exec.Cmd{}}
	srv := grpc.NewServer()
	fnpb.RegisterBeamFnExternalWorkerPoolServer(srv, p)
	fmt.Fprintf(os.Stderr, "winnow-beam worker-pool: listening on %s (-environment_type EXTERNAL -environment_config %s)\n", lis.Addr(), lis.Addr())
	go func() {
		<-ctx.Done()
		p.stopAll()
		srv.Stop()
	}()
	err = srv.Serve(lis)
	p.stopAll()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// pool starts and stops worker processes.
type pool struct {
	fnpb.UnimplementedBeamFnExternalWorkerPoolServer

	bin, dir string

	mu      sync.Mutex
	workers map[string]*exec.Cmd
	stopped bool // stopAll ran: no new worker
}

// StartWorker starts a harness process for the request's worker ID,
// pointed at its control and logging endpoints, with the job's pipeline
// options read from its provisioning endpoint.
func (p *pool) StartWorker(_ context.Context, req *fnpb.StartWorkerRequest) (*fnpb.StartWorkerResponse, error) {
	id := req.GetWorkerId()
	fail := func(format string, a ...any) (*fnpb.StartWorkerResponse, error) {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(os.Stderr, "winnow-beam worker-pool: worker %s: %s\n", id, msg)
		return &fnpb.StartWorkerResponse{Error: msg}, nil
	}
	if req.GetControlEndpoint().GetUrl() == "" || req.GetLoggingEndpoint().GetUrl() == "" {
		return fail("missing control or logging endpoint")
	}
	if id == "" || strings.ContainsAny(id, "/\x00") {
		return fail("bad worker ID %q", id)
	}
	// The provisioning service answers a worker that names itself.
	pctx, cancel := context.WithTimeout(grpcx.WriteWorkerID(context.Background(), id), time.Minute)
	defer cancel()
	info, err := tools.ProvisionInfo(pctx, req.GetProvisionEndpoint().GetUrl())
	if err != nil {
		return fail("provisioning: %v", err)
	}
	opts, err := tools.ProtoToJSON(info.GetPipelineOptions())
	if err != nil {
		return fail("pipeline options: %v", err)
	}
	optsFile := filepath.Join(p.dir, "options-"+id+".json")
	if err := os.WriteFile(optsFile, []byte(opts), 0o600); err != nil {
		return fail("%v", err)
	}
	cmd := exec.Command(p.bin, "--worker=true", "--id="+id,
		"--logging_endpoint="+req.GetLoggingEndpoint().GetUrl(),
		"--control_endpoint="+req.GetControlEndpoint().GetUrl())
	cmd.Env = append(os.Environ(), "PIPELINE_OPTIONS_FILE="+optsFile)
	if u := info.GetStatusEndpoint().GetUrl(); u != "" {
		cmd.Env = append(cmd.Env, "STATUS_ENDPOINT="+u)
	}
	if caps := info.GetRunnerCapabilities(); len(caps) > 0 {
		cmd.Env = append(cmd.Env, "RUNNER_CAPABILITIES="+strings.Join(caps, " "))
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return fail("the worker pool is stopping")
	}
	if _, ok := p.workers[id]; ok {
		return fail("worker %q already exists", id)
	}
	if err := cmd.Start(); err != nil {
		return fail("%v", err)
	}
	p.workers[id] = cmd
	fmt.Fprintf(os.Stderr, "winnow-beam worker-pool: worker %s started, pid %d\n", id, cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(os.Stderr, "winnow-beam worker-pool: worker %s (pid %d) ended: %v\n", id, cmd.Process.Pid, exitText(err))
		os.Remove(optsFile)
		p.mu.Lock()
		if p.workers[id] == cmd {
			delete(p.workers, id)
		}
		p.mu.Unlock()
	}()
	return &fnpb.StartWorkerResponse{}, nil
}

// exitText describes a worker's exit.
func exitText(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

// StopWorker stops the worker's process.
func (p *pool) StopWorker(_ context.Context, req *fnpb.StopWorkerRequest) (*fnpb.StopWorkerResponse, error) {
	p.mu.Lock()
	cmd, ok := p.workers[req.GetWorkerId()]
	p.mu.Unlock()
	fmt.Fprintf(os.Stderr, "winnow-beam worker-pool: worker %s: stop requested\n", req.GetWorkerId())
	if !ok {
		return &fnpb.StopWorkerResponse{Error: fmt.Sprintf("no worker %q running", req.GetWorkerId())}, nil
	}
	stop(cmd)
	return &fnpb.StopWorkerResponse{}, nil
}

// stopAll stops every worker and refuses new ones.
func (p *pool) stopAll() {
	p.mu.Lock()
	p.stopped = true
	cmds := make([]*exec.Cmd, 0, len(p.workers))
	for _, c := range p.workers {
		cmds = append(cmds, c)
	}
	p.mu.Unlock()
	for _, c := range cmds {
		stop(c)
	}
}

// stop sends the worker SIGTERM, and SIGKILL if it is still there after
// five seconds.
func stop(cmd *exec.Cmd) {
	if err := cmd.Process.Signal(syscall.SIGTERM); errors.Is(err, os.ErrProcessDone) {
		return
	}
	for range 50 {
		time.Sleep(100 * time.Millisecond)
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
	}
	cmd.Process.Kill()
}
