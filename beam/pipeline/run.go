package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
)

// sparkBusy is what Beam's Spark job server answers a pipeline submitted
// while another runs: it runs each in the one SparkContext its JVM may
// hold.
const sparkBusy = "Only one SparkContext should be running in this JVM"

// explainFailure adds to a job's failure what an operator can do about
// it, where the runner's own message does not say.
func explainFailure(err error) error {
	if strings.Contains(err.Error(), sparkBusy) {
		return fmt.Errorf("%w\n(the Spark job server runs one pipeline at a time: another was running; run this one when it ends, or on a job server of its own)", err)
	}
	return err
}

// Stats are a run's figures, read from the pipeline's metrics.
type Stats struct {
	Docs, Errors, Empty, Cut, Clusters, Duplicates int64
	Bytes                                          int64
	// Skipped counts the items that hold no page, skipped on purpose
	// (WARC requests, metadata, non-200 responses), as `winnow dedup`
	// counts them by kind.
	Skipped int64
	// PairsDecided counts the candidate pairs decided, PairsDuplicate
	// those that matched (the edges); PairsJoined the distinct pairs of
	// the second round left undecided, their documents already joined
	// by the first (tworound.go).
	PairsDecided, PairsDuplicate, PairsJoined int64
	// LargestBucket is the most documents under one candidate key;
	// LargestUnit the most one worker expanded into pairs at once (a hot
	// bucket is cut into blocks); PairsCapped the pairs of buckets left
	// out by the MaxBucket window, as in `winnow dedup`.
	LargestBucket, LargestUnit, PairsCapped int64
	// Rounds is the number of large-star/small-star rounds that were
	// needed (the rounds after them found every node settled); Unsettled the
	// nodes still unsettled after the last round (0 when converged).
	Rounds    int
	Unsettled int64
	// UnionNodes counts the nodes labelled in one grouping (a graph of at
	// most Options.SmallEdges), 0 when the rounds ran.
	UnionNodes int64
	// Loaded counts the pages loaded into the cluster service (-cluster)
	// by its status, NotLoaded those left out by reason; nil without a
	// load.
	Loaded, NotLoaded map[string]int64
}

// Run runs p on runner and returns its figures. It fails when the
// connected components did not converge within the rounds.
func Run(ctx context.Context, runner string, p *beam.Pipeline) (Stats, error) {
	var res beam.PipelineResult
	var err error
	if slices.Contains(JobServerRunners, runner) && *jobopts.Endpoint != "" && !*jobopts.Async {
		res, err = runOnJobServer(ctx, runner, *jobopts.Endpoint, p)
		if err != nil {
			err = lostJobServer(err, *jobopts.Endpoint)
		}
	} else {
		res, err = beam.Run(ctx, runner, p)
	}
	if err != nil {
		return Stats{}, explainFailure(err)
	}
	var st Stats
	if res == nil {
		return st, nil
	}
	q := res.Metrics().AllMetrics()
	unsettled := map[int]int64{}
	for _, c := range q.Counters() {
		if c.Namespace() != metricNS {
			continue
		}
		v := c.Result()
		name := c.Name()
		switch name {
		case "docs":
			st.Docs += v
		case "errors":
			st.Errors += v
		case "bytes":
			st.Bytes += v
		case "empty":
			st.Empty += v
		case "cut":
			st.Cut += v
		case "skipped":
			st.Skipped += v
		case "clusters":
			st.Clusters += v
		case "duplicates":
			st.Duplicates += v
		case "pairs_decided":
			st.PairsDecided += v
		case "pairs_duplicate":
			st.PairsDuplicate += v
		case "pairs_joined":
			st.PairsJoined += v
		case "bucket_pairs_capped":
			st.PairsCapped += v
		case "cc_union_nodes":
			st.UnionNodes += v
		}
		if status, ok := strings.CutPrefix(name, loadedPrefix); ok {
			if st.Loaded == nil {
				st.Loaded = map[string]int64{}
			}
			st.Loaded[status] += v
		}
		if reason, ok := strings.CutPrefix(name, notLoadedPrefix); ok {
			if st.NotLoaded == nil {
				st.NotLoaded = map[string]int64{}
			}
			st.NotLoaded[reason] += v
		}
		if r, ok := strings.CutPrefix(name, "cc_unsettled_round_"); ok && !strings.HasSuffix(r, "_small") {
			n, err := strconv.Atoi(r)
			if err == nil {
				unsettled[n] += v
			}
		}
	}
	for _, d := range q.Distributions() {
		if d.Namespace() != metricNS {
			continue
		}
		switch d.Name() {
		case "bucket_size":
			st.LargestBucket = max(st.LargestBucket, d.Result().Max)
		case "bucket_unit":
			st.LargestUnit = max(st.LargestUnit, d.Result().Max)
		}
	}
	// Round r counts the nodes unsettled at its start; the check (0)
	// those left after the last round.
	st.Unsettled = unsettled[0]
	for r := 1; ; r++ {
		if unsettled[r] == 0 {
			st.Rounds = r - 1
			break
		}
	}
	if st.Unsettled > 0 {
		return st, fmt.Errorf("pipeline: connected components not converged: %d nodes unsettled after the last round (raise the round limit)", st.Unsettled)
	}
	return st, nil
}
