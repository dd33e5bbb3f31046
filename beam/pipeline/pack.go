package pipeline

import "github.com/zeebo/xxh3"

// Every grouping of the pipeline is packed: an element keyed by a
// document, a bucket or a node goes to group xxh3(key) mod Packs, and the
// DoFn sorts its group by the real key and handles each run of one key as
// the per-key step. A runner then holds state for Packs keys per
// grouping, not one per document (prism keeps about 1.5 KB per key and
// stage: 100 k documents took 19 GB unpacked), while the groups stay small
// enough for one worker (about 40 candidate keys a document / Packs).

// DefaultPacks is the number of groups of each grouping.
const DefaultPacks = 1024

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
