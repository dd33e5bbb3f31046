package pipeline

import "github.com/zeebo/xxh3"

// Every grouping of the pipeline is packed: an element keyed by a
// document, a bucket or a node goes to group xxh3(key) mod Packs, and the
// DoFn sorts its group by the real key and handles each run of one key as
// the per-key step. A runner then holds state for Packs keys per
// grouping, not one per document (prism keeps about 1.5 KB per key and
// stage: 100 k documents took 19 GB unpacked). The elements of a group
// travel in batches (batch.go), one per source group and destination
// group, so a grouping moves up to Packs² elements: 64 groups make 4,096
// batches of about a thousand entries each at 100 k documents, where 1024
// made a million batches of four, whose headers in the runner outweighed
// the data (100 k synthetic pages: 2.0 GB live heap with 1024, 1.4 GB with
// 64). A group then holds 1/64 of a grouping, about 40 MB of candidate
// entries at a million documents: a cluster runner with more workers
// wants more groups (-packs).

// DefaultPacks is the number of groups of each grouping.
const DefaultPacks = 64

// PrismPacks is the number of groups winnow-beam gives each grouping on
// prism: prism runs a step's groups in one bundle in one process, so more
// groups buy no parallelism, and each costs batches (up to packs² a
// step) that the runner handles one by one (on llvm-docs 8 groups
// rather than 64 took 6 % fewer instructions).
const PrismPacks = 8

// pack returns the group of key among packs.
func pack(key string, packs int) int { return int(xxh3.HashString(key) % uint64(packs)) }

// runs calls fn with each run of xs (sorted) whose elements have the same
// key.
func runs[T any](xs []T, key func(*T) string, fn func(run []T)) {
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && key(&xs[j]) == key(&xs[i]) {
			j++
		}
		fn(xs[i:j])
		i = j
	}
}
