// Package pipeline is winnow's offline near-duplicate clustering as an
// Apache Beam pipeline, for corpora that outgrow one machine: the same
// inputs, signatures, candidate tables, decision and winner rules as
// `winnow dedup` (similarity.BatchCluster), spread over the workers of any
// Beam runner (prism in-process, Flink, Spark or Dataflow through the
// portable runner).
//
// The dedup pipeline ([Dedup]):
//
//  1. Inputs are split into shards: a directory by its files, a large
//     plain JSON Lines file by line-aligned byte ranges (each range knows
//     its first line number, so IDs and errors name the same lines as
//     package corpus), any other file (WARC, gzip) whole. Each shard is
//     read with package corpus and its pages signed with package page.
//  2. Keys: a document's key is its ID, prefixed by its input when there
//     are several, with "#n" for the n-th repeat of an ID in input order,
//     as `winnow dedup` names them.
//  3. Candidate keys: the 15 megashingles (Fetterly et al.), the
//     simhash blocks (Manku et al.) and the min-hash bands of every
//     document, each keyed with its table. Documents sharing a key form a
//     bucket; as in BatchCluster each is compared with at most MaxBucket
//     (256) predecessors in key order. A bucket over HotBucket documents
//     is cut into blocks of MaxBucket (each with the block before it) that
//     other workers expand into pairs, so a boilerplate key shared by a
//     million pages costs its worker a sort, not 256 million pairs; the
//     pairs the window leaves out are counted (bucket_pairs_capped).
//  4. Pairs are deduplicated, joined with both signatures (two
//     CoGroupByKeys) and decided by similarity.Decision.Decide.
//  5. Connected components of the matching pairs by the large-star /
//     small-star rounds of Kiveris, Lattanzi, Mirrokni, Rastogi and
//     Vassilvitskii, "Connected Components in MapReduce and Beyond",
//     SoCC 2014: each round is two GroupByKeys over the edges, no worker
//     holds more than one node's neighbours, and the graph converges to
//     one star per component centred on its smallest key. Beam pipelines
//     are acyclic, so the rounds are unrolled up to a limit; a counter per
//     round reports the nodes not yet settled, and a pipeline whose last
//     round still moved any fails.
//  6. Each component (with its members' signatures) is clustered by
//     similarity.BatchCluster on one worker: within a component that
//     finds the same single-link component, winner (smallest key) and
//     verdicts, and splits it by winner verification as `winnow dedup`
//     does. Lines are written in winner-key order, one JSON object per
//     cluster, as `winnow dedup` writes them.
//
// The result does not depend on the runner's parallelism or bundling: every
// step is a function of its key's values sorted by document key.
package pipeline
