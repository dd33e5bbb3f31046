package pipeline

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestHotBucketBlocksKeepIDs: a hot bucket cut into blocks gives the
// pairs the bucket gives whole. Its entries carry 8-byte document IDs
// (idKey) whose bytes past 0x7f are no UTF-8: as JSON, a block coerced
// them to U+FFFD, so IDs that differed only in such a byte became one and
// the block's pairs named documents that do not exist. The sample's 53
// IDs are all below 0x80 and never showed it.
func TestHotBucketBlocksKeepIDs(t *testing.T) {
	bucket := bucketKey(tableMega, 7)
	var es []Entry
	for i := range 300 {
		id := idKey(uint64(100 + 7*i))
		es = append(es, Entry{Bucket: bucket, Key: id, Rep: id})
	}
	pairsOf := func(hot int) []string {
		f := &bucketFn{Window: 8, Hot: hot, SimhashK: 3, Packs: 3}
		f.Setup()
		var joins []Join
		collect := func(_ int, b []byte) {
			var err error
			if joins, err = readBatches[Join](joins, single(b)); err != nil {
				t.Fatal(err)
			}
		}
		blocks := &blockFn{Packs: f.Packs}
		emitBlock := func(_ int, enc []byte) {
			if err := blocks.ProcessElement(0, enc, collect, func(int, []byte) {}); err != nil {
				t.Fatal(err)
			}
		}
		f.bucket(context.Background(), slices.Clone(es), splitPairs(&f.pairs, &f.rest, false, f.Packs), emitBlock)
		f.pairs.flush(collect)
		var got []string
		for _, j := range joins {
			got = append(got, fmt.Sprintf("%q %d %q", j.Key, j.Kind, j.Other))
		}
		slices.Sort(got)
		return got
	}
	whole, blocked := pairsOf(len(es)), pairsOf(2)
	if len(whole) == 0 {
		t.Fatal("the whole bucket gave no pairs")
	}
	if !slices.Equal(blocked, whole) {
		t.Errorf("the bucket cut into blocks gave %d pairs, whole %d; first blocked %q, first whole %q", len(blocked), len(whole), blocked[0], whole[0])
	}
}

// single iterates over one batch, as a grouping's values.
func single(b []byte) func(*[]byte) bool {
	done := false
	return func(e *[]byte) bool {
		if done {
			return false
		}
		*e, done = b, true
		return true
	}
}
