package backend

import (
	"github.com/winnow-search/winnow/backend/partition"
	"github.com/winnow-search/winnow/similarity"
)

// Candidate tables of tier 2. Each group representative is entered under
// 4 simhash blocks of 16 bits (a pair within distance 3 shares one,
// Manku et al.) and 16 min-hash bands of 5 values (LSH: a pair with
// Jaccard 0.7 shares a band with probability 0.95, 0.8 with 0.998),
// each key mixed with the representative's partition. Keys are 32-bit
// hashes: a collision only adds a candidate, which the decision rejects.
// The sentence fingerprints (Huang et al.: pages sharing a sentence are
// perhaps similar) form one more table, which finds drifted versions of a
// page whose min-hash Jaccard has fallen below the bands' reach.
const (
	simhashBlocks    = 4
	bandRows         = 5
	fingerprintTable = 255
)

// slot is one indexed group.
type slot struct {
	id      string
	part    int32
	simhash uint64
	bands   []uint32 // band hashes before the partition is mixed in
	fps     []uint32 // sentence fingerprints (Huang et al.)
	lengths []uint32
}

// index holds the candidate tables of group representatives. Most keys
// hold one group: they live in single, the rest in multi. Not safe for
// concurrent use.
type index struct {
	part   *partition.Partitioner // nil: every group in partition -1
	tau    float64
	slots  []slot
	free   []int32
	byID   map[string]int32
	single map[uint32]int32
	multi  map[uint32][]int32
}

func newIndex(p *partition.Partitioner, tau float64) *index {
	return &index{part: p, tau: tau, byID: map[string]int32{}, single: map[uint32]int32{}, multi: map[uint32][]int32{}}
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func tableKey(part int32, table int, v uint64) uint32 {
	return uint32(mix64(v ^ mix64(uint64(uint32(part))<<8|uint64(table))))
}

func bandHashes(s *similarity.Signature) []uint32 {
	n := len(s.MinHash) / bandRows
	out := make([]uint32, n)
	for b := range n {
		h := uint64(b + 1)
		for _, v := range s.MinHash[b*bandRows : (b+1)*bandRows] {
			h = mix64(h ^ uint64(v))
		}
		out[b] = uint32(h)
	}
	return out
}

// keys calls fn with every table key of sl in partition part.
func (sl *slot) keys(part int32, fn func(uint32)) {
	for b := range simhashBlocks {
		fn(tableKey(part, b, sl.simhash>>(16*b)&0xffff))
	}
	for i, h := range sl.bands {
		fn(tableKey(part, simhashBlocks+i, uint64(h)))
	}
	for _, f := range sl.fps {
		fn(tableKey(part, fingerprintTable, uint64(f)))
	}
}

func (x *index) partition(lengths []uint32) int32 {
	if x.part == nil {
		return -1
	}
	return int32(x.part.Partition(lengths))
}

func (x *index) len() int { return len(x.byID) }

// add enters group id with representative s, replacing its old entry.
func (x *index) add(id string, s *similarity.Signature) {
	x.remove(id)
	if s == nil || s.Empty() {
		return
	}
	sl := slot{id: id, simhash: s.Simhash, bands: bandHashes(s), fps: s.Fingerprints, lengths: s.Lengths}
	sl.part = x.partition(sl.lengths)
	var i int32
	if n := len(x.free); n > 0 {
		i = x.free[n-1]
		x.free = x.free[:n-1]
		x.slots[i] = sl
	} else {
		i = int32(len(x.slots))
		x.slots = append(x.slots, sl)
	}
	x.byID[id] = i
	x.insert(i)
}

// moreBit marks a single entry whose key holds more groups in multi.
// Promotion never deletes from single: deleted slots of a Go map slow
// every later miss.
const moreBit = int32(-1 << 31)

func (x *index) insert(i int32) {
	sl := &x.slots[i]
	sl.keys(sl.part, func(k uint32) {
		if j, ok := x.single[k]; ok {
			x.single[k] = j | moreBit
			x.multi[k] = append(x.multi[k], i)
		} else {
			x.single[k] = i
		}
	})
}

// remove drops group id, if present.
func (x *index) remove(id string) {
	i, ok := x.byID[id]
	if !ok {
		return
	}
	sl := &x.slots[i]
	sl.keys(sl.part, func(k uint32) {
		j, ok := x.single[k]
		if !ok {
			return
		}
		m := x.multi[k]
		if j&^moreBit == i {
			switch {
			case j&moreBit == 0:
				delete(x.single, k)
			case len(m) == 1:
				x.single[k] = m[0]
				delete(x.multi, k)
			default:
				x.single[k] = m[len(m)-1] | moreBit
				x.multi[k] = m[:len(m)-1]
			}
			return
		}
		for n, v := range m {
			if v == i {
				m[n] = m[len(m)-1]
				m = m[:len(m)-1]
				break
			}
		}
		if len(m) == 0 {
			delete(x.multi, k)
			x.single[k] = j &^ moreBit
		} else {
			x.multi[k] = m
		}
	})
	delete(x.byID, id)
	x.slots[i] = slot{}
	x.free = append(x.free, i)
}

// repartition re-enters every group under partitioner p.
func (x *index) repartition(p *partition.Partitioner) {
	x.part = p
	clear(x.single)
	clear(x.multi)
	for _, i := range x.byID {
		x.slots[i].part = x.partition(x.slots[i].lengths)
		x.insert(i)
	}
}

// candidates calls fn with the IDs of the groups that share a table key
// with s in a partition that may hold its near-duplicates (Zhu §4 bound;
// partition.Partitioner.Candidates). An ID may come more than once.
func (x *index) candidates(s *similarity.Signature, fn func(id string)) {
	sl := slot{simhash: s.Simhash, bands: bandHashes(s), fps: s.Fingerprints}
	visit := func(k uint32) {
		j, ok := x.single[k]
		if !ok {
			return
		}
		fn(x.slots[j&^moreBit].id)
		if j&moreBit != 0 {
			for _, i := range x.multi[k] {
				fn(x.slots[i].id)
			}
		}
	}
	if x.part == nil {
		sl.keys(-1, visit)
		return
	}
	for _, p := range x.part.Candidates(s.Lengths, x.tau) {
		sl.keys(int32(p), visit)
	}
}
