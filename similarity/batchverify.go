package similarity

import (
	"reflect"
	"slices"

	"github.com/winnow-search/winnow/internal/parallel"
)

// spanning verifies the candidate pairs of one batch of [BatchCluster] so
// that a group of k near-duplicates costs about k-1 verifications, not
// the k(k-1)/2 pairs its table buckets hold.
//
// The union-find only merges matches, so a pair whose documents are
// already in one cluster cannot change the clusters: the components of
// the pairs found duplicates are the same whether it is verified or not,
// and every verdict the output needs is computed afterwards against the
// winners. Within a batch the pairs are verified together on the workers,
// so the union-find does not yet know the batch's matches. spanning takes
// the batch's candidate pairs in order and assumes each chosen one a
// match: a pair whose documents the chosen pairs already connect waits.
// The chosen pairs (a spanning forest) are verified on the workers and
// their matches merged; a waiting pair whose documents are now in one
// cluster is Joined, the others are taken again the same way, until none
// is left. When every chosen pair matches, as in a group of mirrors, one
// round does it; every round verifies at least one pair.
//
// The rounds depend only on the batch and the union-find, not on the
// workers, so neither the clusters nor the counts do.
type spanning struct {
	// parent and stamp are the assumed unions over u's roots: x's assumed
	// parent is parent[x] when stamp[x] is the round's gen, else x is a
	// root. A stamp, not a map cleared each round: this walk over every
	// candidate pair of a batch is the hot loop of a large family of
	// pages (a template's thousand pages in one bucket).
	parent      []int32
	stamp       []uint32
	gen         uint32
	todo, chose []int
	// roots holds u's roots of each pair of todo, in order, while no
	// union has changed them since they were found: in a family whose
	// pages mostly do not match, most rounds merge nothing, and the two
	// look-ups were a third of the walk's cost.
	roots [][2]int32
}

// find returns the root of x among the assumed unions.
func (sp *spanning) find(x int32) int32 {
	for sp.stamp[x] == sp.gen {
		x = sp.parent[x]
	}
	return x
}

// nextRound forgets the assumed unions.
func (sp *spanning) nextRound() {
	sp.gen++
	if sp.gen == 0 { // wrapped: stamps of old rounds could match again
		clear(sp.stamp)
		sp.gen = 1
	}
}

// verify verifies a spanning forest of the candidate pairs of batch
// (results[k].cand) into results, merges the matches into u, and marks
// the pairs left unverified as joined.
func (sp *spanning) verify(m *matcher, u *UnionFind, batch [][2]int32, results []pairResult, workers int) {
	if n := u.Len(); len(sp.stamp) < n {
		sp.parent, sp.stamp, sp.gen = make([]int32, n), make([]uint32, n), 0
	}
	sp.todo = sp.todo[:0]
	for k := range batch {
		if results[k].cand {
			sp.todo = append(sp.todo, k)
		}
	}
	found := false // sp.roots holds the roots of sp.todo
	for len(sp.todo) > 0 {
		sp.nextRound()
		sp.chose = sp.chose[:0]
		wait, waitRoots := sp.todo[:0], sp.roots[:0] // in place: entry x is read before it is written
		for x, k := range sp.todo {
			var ri, rj int32
			if found {
				ri, rj = sp.roots[x][0], sp.roots[x][1]
			} else {
				ri, rj = int32(u.Find(int(batch[k][0]))), int32(u.Find(int(batch[k][1])))
			}
			if ri == rj {
				results[k].joined = true
				continue
			}
			ai, aj := sp.find(ri), sp.find(rj)
			if ai == aj {
				wait, waitRoots = append(wait, k), append(waitRoots, [2]int32{ri, rj})
				continue
			}
			hi := max(ai, aj)
			sp.parent[hi], sp.stamp[hi] = min(ai, aj), sp.gen
			sp.chose = append(sp.chose, k)
		}
		parallel.For(len(sp.chose), workers, 1, func(x int) {
			k := sp.chose[x]
			m.verify(int(batch[k][0]), int(batch[k][1]), &results[k])
		})
		found = true
		for _, k := range sp.chose {
			if results[k].dup && u.Union(int(batch[k][0]), int(batch[k][1])) {
				found = false // the roots may have changed
			}
		}
		sp.todo, sp.roots = wait, waitRoots
	}
}

// sameSignatures returns, for each signature of sigs that use accepts,
// the index of the first signature equal to it (itself when none comes
// before), and for the others their own index; and the number of
// signatures that are not their own. Two equal signatures get the same
// verdict against any third, so a copy needs no table row: it matches
// what its original matches, and its original if the signature matches
// itself. Equality is every field's ([reflect.DeepEqual] after the long
// slices), so a field added to [Signature] takes part.
func sameSignatures(sigs []*Signature, use func(*Signature) bool) (same []int32, copies int) {
	same = make([]int32, len(sigs))
	first := make(map[uint64][]int32) // by hash: the originals
	for i, s := range sigs {
		same[i] = int32(i)
		if s == nil || !use(s) {
			continue
		}
		h := signatureHash(s)
		found := false
		for _, o := range first[h] {
			if equalSignatures(sigs[o], s) {
				same[i], found = o, true
				copies++
				break
			}
		}
		if !found {
			first[h] = append(first[h], int32(i))
		}
	}
	return same, copies
}

// signatureHash hashes the fields of s that tell pages apart (FNV-1a
// style over whole values).
func signatureHash(s *Signature) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	mix(uint64(s.Tokens))
	mix(uint64(s.Bytes))
	mix(s.Simhash)
	for _, v := range s.MinHash {
		mix(uint64(v))
	}
	for _, v := range s.Seq {
		mix(uint64(v))
	}
	return h
}

// equalSignatures reports whether a and b are equal in every field.
func equalSignatures(a, b *Signature) bool {
	if a.Tokens != b.Tokens || a.Simhash != b.Simhash || !slices.Equal(a.Seq, b.Seq) || !slices.Equal(a.MinHash, b.MinHash) {
		return false
	}
	x, y := *a, *b
	x.Seq, y.Seq, x.MinHash, y.MinHash = nil, nil, nil, nil
	return reflect.DeepEqual(x, y)
}

// joinCopies puts the copies of each signature (m.same) where the tables
// would have: a copy shares every table bucket of its original, so it
// is compared with its original, and it matches every document its
// original matches. The copies join their original's cluster when the
// signature matches itself (one verdict for all its copies) or when the
// original matched another document; otherwise each stays alone. A
// bucket over MaxBucket documents compares a document with only its
// last MaxBucket predecessors; with copies left out, fewer buckets are
// cut.
func (m *matcher) joinCopies(u *UnionFind, specs []tableSpec, st *BatchStats) {
	var originals []int32 // with copies, in rank order
	seen := make(map[int32]bool)
	for r, o := range m.same {
		if int(o) != r && !seen[o] {
			seen[o] = true
			originals = append(originals, o)
		}
	}
	results := make([]pairResult, len(originals))
	parallel.For(len(originals), m.workers, 1, func(k int) {
		o := int(originals[k])
		if bucketed(m.sigs[o], specs) {
			results[k] = m.evaluate(o, o)
		}
	})
	// join: the signature matches itself, or the original matched
	// another document (then its copies match that one too).
	join := make(map[int32]bool, len(originals))
	for k, o := range originals {
		r := &results[k]
		st.Pairs++
		if r.cand {
			st.count(r)
		}
		m.record(int(o), int(o), r)
		join[o] = r.dup || u.Size(int(o)) > 1
	}
	for r, o := range m.same {
		if int(o) != r && join[o] {
			u.Union(int(o), r)
		}
	}
}

// bucketed reports whether a table of specs holds s: whether the tables
// compare s with a copy of it.
func bucketed(s *Signature, specs []tableSpec) bool {
	for _, sp := range specs {
		switch sp.kind {
		case tableMega:
			if len(s.Supershingles) >= 2 {
				return true
			}
		case tableSimhash:
			return true
		case tableBand:
			if (sp.index+1)*sp.rows <= len(s.MinHash) {
				return true
			}
		}
	}
	return false
}
