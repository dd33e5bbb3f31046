// Command winnow-beam runs winnow's offline jobs as Apache Beam pipelines:
//
//	winnow-beam dedup [-runner prism|universal|flink|spark|dataflow] [-endpoint HOST:PORT] [-o FILE] [-cluster URL] INPUT...
//	winnow-beam assign -groups FILE [-o FILE] INPUT...
//
// dedup reads the inputs of `winnow dedup` and writes the same JSON Lines;
// assign is the incremental tier 2 of Zhu et al. (see package pipeline).
// Every flag of the Beam Go SDK (-environment_type, -project, -region,
// -temp_location, ...) is accepted after the subcommand.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	beamrunners "github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/winnow-search/winnow/beam/pipeline"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/offline"
)

func main() {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		// No subcommand: a Beam worker started by a runner (its flags say
		// so), or a request for help.
		flag.Parse()
		beam.Init()
		usage(os.Stderr)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A runner does not always return promptly when its context ends
		// (a job server may keep polling): stop here. The output is written
		// under a temporary name and renamed once complete, so nothing is
		// left under its name.
		<-ctx.Done()
		// A signal, not main's own stop() as it returns: a signal's
		// cause is an error of its own (signal.NotifyContext).
		if cause := context.Cause(ctx); errors.Is(cause, context.Canceled) && cause != context.Canceled {
			// A second signal stops at once.
			stop()
			grace := time.Duration(interruptGrace.Load())
			if grace > time.Second {
				fmt.Fprintln(os.Stderr, "winnow-beam: interrupted; cancelling the job on the job server (again to leave it running)")
			}
			time.Sleep(grace)
			removeSpill()
			fmt.Fprintln(os.Stderr, "winnow-beam: interrupted")
			os.Exit(130)
		}
	}()
	var err error
	switch os.Args[1] {
	case "dedup":
		err = runDedup(ctx, os.Args[2:])
	case "assign":
		err = runAssign(ctx, os.Args[2:])
	case "worker-pool":
		err = runPool(ctx, os.Args[2:])
	case "jobs":
		err = runJobs(ctx, os.Args[2:])
	case "cancel":
		err = runCancel(ctx, os.Args[2:])
	default:
		usage(os.Stderr)
		os.Exit(2)
	}
	removeSpill()
	if ctx.Err() != nil {
		if err != nil && !errors.Is(err, flag.ErrHelp) && err != context.Canceled {
			// What became of the job on the job server.
			fmt.Fprintln(os.Stderr, "winnow-beam:", err)
		}
		fmt.Fprintln(os.Stderr, "winnow-beam: interrupted")
		os.Exit(130)
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "winnow-beam:", err)
		}
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: winnow-beam dedup [-runner NAME] [-endpoint HOST:PORT] [-o FILE] [-cluster URL] [INPUT...]\n"+
		"       winnow-beam assign -groups FILE [-runner NAME] [-o FILE] INPUT...\n"+
		"       winnow-beam worker-pool [-addr HOST:PORT]\n"+
		"       winnow-beam jobs -endpoint HOST:PORT\n"+
		"       winnow-beam cancel -endpoint HOST:PORT JOB...\n"+
		"run `winnow-beam dedup -h` for the flags, Beam's included")
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// common are the flags of every subcommand: winnow's configuration,
// the output, and Beam's own flags (registered on flag.CommandLine by the
// SDK), so that -runner, -endpoint, -environment_type, -project, ... work
// after the subcommand.
type common struct {
	fs      *flag.FlagSet
	cfgPath string
	sets    stringList
	out     string
	split   pipeline.SplitOptions
	memprof string
	cpuprof string
	spill   string
	verbose bool
	// The pipeline's own knobs, the same for both subcommands.
	rounds, hot, packs int
	smallEdges         int64
}

func newCommon(name string) *common {
	c := &common{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.fs.StringVar(&c.cfgPath, "config", "", "winnow's configuration `file` (as winnow -config)")
	c.fs.Var(&c.sets, "set", "set a configuration `KEY=VALUE` (repeatable, as winnow -set)")
	c.fs.StringVar(&c.out, "o", "-", "write the JSON Lines to `file` (- for stdout: local runners only)")
	c.fs.IntVar(&c.split.FilesPerShard, "shard-files", 64, "files of a directory read by one shard")
	c.fs.StringVar(&c.memprof, "memprofile", "", "write a heap profile of the live heap at its peak to `file` (sampled every second)")
	c.fs.StringVar(&c.cpuprof, "cpuprofile", "", "write a CPU profile of the run to `file` (prism runs the workers in this process)")
	c.fs.StringVar(&c.spill, "spill", "auto", "`dir`ectory (shared by every worker) where batches between steps are written, only references crossing the runner; "+
		"auto: beside the output on the flink, spark and universal runners, off on prism and dataflow; off: batches cross the runner")
	c.fs.Int64Var(&c.split.RangeBytes, "shard-bytes", 64<<20, "JSON Lines files over this many `bytes` are read in ranges of this size")
	c.fs.IntVar(&c.rounds, "rounds", pipeline.DefaultRounds, "most large-star/small-star `rounds` of the connected components")
	c.fs.IntVar(&c.hot, "hot", pipeline.DefaultHotBucket, "candidate buckets over `n` documents are expanded in blocks by other workers")
	c.fs.IntVar(&c.packs, "packs", 0, fmt.Sprintf("`groups` of each grouping (elements are batched per group); 0: %d on prism, %d on the other runners", pipeline.PrismPacks, pipeline.DefaultPacks))
	c.fs.Int64Var(&c.smallEdges, "small-edges", pipeline.DefaultSmallEdges, "candidate edges of at most this many `bytes` are joined into components in one grouping on one worker, more in rounds; negative: always rounds")
	c.fs.BoolVar(&c.verbose, "v", false, "log Beam's and the runner's progress too (the pipeline submitted, the job's states, each worker's start and stop); without it only their warnings and errors")
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if c.fs.Lookup(f.Name) == nil {
			c.fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	return c
}

// parse parses args and loads the configuration.
func (c *common) parse(args []string) (config.Config, error) {
	if err := c.fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	beam.Init()
	if !c.verbose {
		quietRunnerLogs()
	}
	return config.Load(c.cfgPath, os.Environ(), c.sets)
}

// jobServerAnswers reports whether the job server at -endpoint answers;
// when it does not, the run says so (pipeline.Run).
func jobServerAnswers(ctx context.Context) bool {
	_, err := pipeline.Jobs(ctx, *jobopts.Endpoint)
	return err == nil
}

// run runs p on runner run, writing to out, with the spill directory and
// the profiles the flags ask for.
func (c *common) run(ctx context.Context, run, out string, p *beam.Pipeline) (pipeline.Stats, error) {
	if err := c.startSpill(run, out); err != nil {
		return pipeline.Stats{}, err
	}
	var prof *peakProfiler
	if c.memprof != "" {
		prof = startPeakProfile(c.memprof, time.Second)
	}
	stopCPU, err := startCPUProfile(c.cpuprof)
	if err != nil {
		return pipeline.Stats{}, err
	}
	if slices.Contains(pipeline.JobServerRunners, run) && *jobopts.Endpoint != "" && !*jobopts.Async && jobServerAnswers(ctx) {
		if *jobopts.JobName == "" {
			*jobopts.JobName = pipeline.JobName()
		}
		// The job server keeps a job running when this process is
		// killed (kill -9, a lost machine): its name is how to stop it.
		fmt.Fprintf(os.Stderr, "winnow-beam %s: job %s on the job server at %s (if winnow-beam is killed, `winnow-beam cancel -endpoint %s %s` stops it)\n",
			c.fs.Name(), *jobopts.JobName, *jobopts.Endpoint, *jobopts.Endpoint, *jobopts.JobName)
	}
	st, err := pipeline.Run(ctx, run, p)
	err = errors.Join(err, stopCPU())
	if prof != nil {
		peak, live, perr := prof.end()
		fmt.Fprintf(os.Stderr, "winnow-beam %s: peak heap %.2f GB, of it live after a collection %.2f GB (profile %s)\n",
			c.fs.Name(), float64(peak)/1e9, float64(live)/1e9, c.memprof)
		err = errors.Join(err, perr)
	}
	return st, err
}

// options are the pipeline's options from the flags, for runner run.
func (c *common) options(run string, cfg config.Config, shards []pipeline.Shard, out string) pipeline.Options {
	packs := c.packs
	if packs == 0 && run == "prism" {
		packs = pipeline.PrismPacks
	}
	return pipeline.Options{
		Config: cfg, Shards: shards, Several: len(c.fs.Args()) > 1, Output: out,
		Rounds: c.rounds, SmallEdges: c.smallEdges, HotBucket: c.hot, Packs: packs,
	}
}

// quietRunnerLogs keeps Beam's and prism's informational logs off
// stderr: the submitted pipeline's protocol buffer as text (tens of
// kilobytes), the job's states, every worker's start and stop. Their
// warnings and errors still show, and so do the pipeline's own
// (a skipped record), which the workers log as warnings.
func quietRunnerLogs() {
	beamlog.SetLogger(&beamlog.Standard{Level: beamlog.SevWarn})
	// prism logs through slog's default logger, taken when its job
	// service starts, so this is set before the pipeline runs. The
	// standard log package, which Beam's Standard logger writes to,
	// then goes through slog too: at warning level, so it passes.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	slog.SetLogLoggerLevel(slog.LevelWarn)
}

// output returns the path the pipeline writes and a function that, after
// the run, copies it to stdout when the output is "-".
func (c *common) output() (string, func() error, error) {
	if c.out != "-" {
		abs := c.out
		if !strings.Contains(abs, "://") {
			var err error
			if abs, err = filepath.Abs(abs); err != nil {
				return "", nil, err
			}
		}
		return abs, func() error { return nil }, nil
	}
	dir, err := os.MkdirTemp("", "winnow-beam")
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, "out.jsonl")
	return p, func() error {
		defer os.RemoveAll(dir)
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("reading the output (with -o -, the runner must share this machine's files): %w", err)
		}
		defer f.Close()
		_, err = io.Copy(os.Stdout, f)
		return err
	}, nil
}

// interruptGrace is how long winnow-beam waits after SIGINT or SIGTERM
// for the run to end before it exits: on a job server, long enough to
// cancel the job there (pipeline.CancelWait).
var interruptGrace atomic.Int64

func init() { interruptGrace.Store(int64(500 * time.Millisecond)) }

// runners are the runners winnow-beam links in (-runner).
var runners = []string{"prism", "universal", "flink", "spark", "dataflow"}

// runner returns the -runner flag's runner (prism when unset), or an
// error naming the choices.
func runner() (string, error) {
	r := *beamrunners.Runner
	if r == "" {
		return "prism", nil
	}
	if !slices.Contains(runners, r) {
		return "", fmt.Errorf("unknown runner %q: one of %s", r, strings.Join(runners, ", "))
	}
	if slices.Contains(pipeline.JobServerRunners, r) {
		interruptGrace.Store(int64(pipeline.CancelWait + 5*time.Second))
	}
	if strings.EqualFold(*jobopts.EnvironmentType, "process") {
		return "", errProcessEnv
	}
	if r != "prism" && r != "dataflow" && !jobopts.IsLoopback() && *jobopts.WorkerBinary == "" {
		// The job server stages this binary for DOCKER and EXTERNAL
		// workers: without -worker_binary the SDK would compile the
		// worker from source.
		self, err := os.Executable()
		if err != nil {
			return "", err
		}
		*jobopts.WorkerBinary = self
	}
	return r, nil
}

// errProcessEnv explains -environment_type PROCESS: the Go SDK this
// binary is built with (v2.62.0) cannot describe a PROCESS environment
// (its graphx.CreateEnvironment fails with "unsupported environment
// beam:env:process:v1" before anything is submitted).
var errProcessEnv = errors.New("-environment_type PROCESS: Beam's Go SDK v2.62.0 cannot build a PROCESS environment (\"unsupported environment beam:env:process:v1\"); use LOOPBACK with a job server on this machine, or DOCKER (the apache/beam_go_sdk:2.62.0 image on every worker) or EXTERNAL (a worker pool's address) on a cluster")

func runDedup(ctx context.Context, args []string) error {
	c := newCommon("dedup")
	clusterURL := c.fs.String("cluster", "", "also load the signed pages into the cluster service at `URL` (winnow cluster), in input order, as winnow dedup -cluster")
	c.fs.StringVar(clusterURL, "backend", "", "former name of -cluster (deprecated)")
	c.fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: winnow-beam dedup [flags] [INPUT...]\n\n"+
			"INPUT is a directory of .html/.txt files, a .jsonl[.gz] file or a .warc[.gz] file, as for winnow dedup;\n"+
			"with none, the embedded sample. Each output line is one cluster, as winnow dedup writes it.")
		c.fs.PrintDefaults()
	}
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	run, err := runner()
	if err != nil {
		return err
	}
	shards, err := pipeline.Split(c.fs.Args(), c.split)
	if err != nil {
		return err
	}
	out, finish, err := c.output()
	if err != nil {
		return err
	}
	o := c.options(run, cfg, shards, out)
	o.Backend = *clusterURL
	p, s := beam.NewPipelineWithRoot()
	if err := pipeline.Dedup(s, o); err != nil {
		return err
	}
	start := time.Now()
	st, err := c.run(ctx, run, out, p)
	if err != nil {
		return err
	}
	if *jobopts.Async {
		return nil
	}
	if st.Docs == 0 {
		// As winnow dedup: no output file is a failure, not an empty result.
		return fmt.Errorf("winnow-beam dedup: nothing could be read: no document in the input (%d bad items, %d items holding no page)", st.Errors, st.Skipped)
	}
	if !strings.Contains(out, "://") {
		// The file the job wrote, not the runner's counters: prism's
		// counters of the last steps came back short on a large run
		// (240 of the 418 clusters written, in one run of two).
		if st.Clusters, st.Duplicates, err = countOutput(out); err != nil {
			return err
		}
	}
	if err := finish(); err != nil {
		return err
	}
	el := time.Since(start)
	mb := float64(st.Bytes) / (1 << 20)
	fmt.Fprintf(os.Stderr, "winnow-beam dedup: %d documents (%.1f MiB), %d skipped with errors, %d holding no page, %d too short to compare, %d cut at the size cap; "+
		"%d clusters holding %d duplicates; %s (%.0f docs/s); %d pairs decided, %d matched, %d skipped as already joined; "+
		"largest key group %d documents (%d after splitting), %d pairs capped; %s\n",
		st.Docs, mb, st.Errors, st.Skipped, st.Empty, st.Cut, st.Clusters, st.Duplicates, el.Round(time.Millisecond),
		float64(st.Docs)/el.Seconds(), st.PairsDecided, st.PairsDuplicate, st.PairsJoined,
		st.LargestBucket, st.LargestUnit, st.PairsCapped, componentsNote(st))
	if *clusterURL != "" {
		fmt.Fprintf(os.Stderr, "winnow-beam dedup: loaded into %s: %s; not loaded: %s\n", *clusterURL, offline.FormatCounts(st.Loaded), cmp.Or(offline.FormatCounts(st.NotLoaded), "none"))
	}
	return nil
}

// countOutput returns the clusters of a dedup output file and the
// duplicates they hold (each line's size less its winner).
func countOutput(path string) (clusters, duplicates int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	for dec.More() {
		var line struct {
			Size int64 `json:"size"`
		}
		if err := dec.Decode(&line); err != nil {
			return 0, 0, fmt.Errorf("reading back the output %s: %w", path, err)
		}
		clusters++
		duplicates += max(line.Size-1, 0)
	}
	return clusters, duplicates, nil
}

// componentsNote says how the connected components were found.
func componentsNote(st pipeline.Stats) string {
	if st.UnionNodes > 0 {
		return fmt.Sprintf("components of %d documents in one grouping", st.UnionNodes)
	}
	return fmt.Sprintf("%d component rounds", st.Rounds)
}

func runAssign(ctx context.Context, args []string) error {
	c := newCommon("assign")
	groups := c.fs.String("groups", "", "the existing groups: JSON Lines of group, winner URL and signature, as the cluster service's GET /v1/winners sends them")
	c.fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: winnow-beam assign -groups FILE [flags] [INPUT...]\n\n"+
			"Assigns each page of the inputs to the existing group whose winner it matches best, or to a new group;\n"+
			"one JSON line per page: url, id, signature (as the cluster service ingests them), group or new_group.")
		c.fs.PrintDefaults()
	}
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	run, err := runner()
	if err != nil {
		return err
	}
	if *groups == "" {
		return errors.New("assign: -groups is required")
	}
	part, err := pipeline.SamplePartitioner(*groups)
	if err != nil {
		return err
	}
	groupsPath, err := filepath.Abs(*groups)
	if err != nil {
		return err
	}
	shards, err := pipeline.Split(c.fs.Args(), c.split)
	if err != nil {
		return err
	}
	out, finish, err := c.output()
	if err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	if err := pipeline.Assign(s, pipeline.AssignOptions{
		Options:     c.options(run, cfg, shards, out),
		Groups:      groupsPath,
		Partitioner: part,
	}); err != nil {
		return err
	}
	start := time.Now()
	st, err := c.run(ctx, run, out, p)
	if err != nil {
		return err
	}
	if *jobopts.Async {
		return nil
	}
	if st.Docs == 0 {
		// As dedup: an input without a page is a failure, not an empty result.
		return fmt.Errorf("winnow-beam assign: nothing could be read: no document in the input (%d bad items, %d items holding no page)", st.Errors, st.Skipped)
	}
	if err := finish(); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "winnow-beam assign: %d documents (%.1f MiB), %d skipped with errors, %d holding no page; %s (%.0f docs/s); "+
		"%d pairs decided among the pages that joined no group, %d matched, %d skipped as already joined; %s\n",
		st.Docs, float64(st.Bytes)/(1<<20), st.Errors, st.Skipped, el.Round(time.Millisecond),
		float64(st.Docs)/el.Seconds(), st.PairsDecided, st.PairsDuplicate, st.PairsJoined, componentsNote(st))
	return nil
}
