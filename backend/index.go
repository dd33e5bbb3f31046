package backend

import (
	"math/bits"

	"github.com/winnow-search/winnow/backend/partition"
	"github.com/winnow-search/winnow/similarity"
)

// Candidate tables of tier 2. Each group representative is entered under
// 4 simhash blocks of 16 bits (a pair within distance 3 shares one,
// Manku et al.) and 16 min-hash bands of 5 values (LSH: a pair with
// Jaccard 0.7 shares a band with probability 0.95, 0.8 with 0.998).
// Keys are 32-bit hashes of (table, value): a collision only adds a
// candidate, which the decision rejects. The sentence fingerprints (Huang
// et al.: pages sharing a sentence are perhaps similar) form one more
// table, which finds drifted versions of a page whose min-hash Jaccard has
// fallen below the bands' reach.
//
// The partition is not part of the key: every key has one posting list
// over all partitions, and each posting carries its group's partition, so
// a page costs one hash lookup per key however many partitions the
// length-vector bound allows, and the bound filters while the postings
// are scanned (Zhu's partitions then bound the comparisons, not the
// lookups).
//
// The simhash tables serve the pairs within simhashReach bits: a group
// found only through a simhash block is a candidate when its simhash is
// that close to the page's. Farther ones sharing a 16-bit block by chance
// are many (with 1 M groups about 15 per block value) and would cost a
// comparison each; a near-duplicate among them is still found through a
// band or a sentence fingerprint it shares (see the recall measurement
// in TestSimhashReachRecall).
const (
	simhashReach     = 3
	simhashBlocks    = 4
	bandRows         = 5
	fingerprintTable = 255
)

// slot is one indexed group.
type slot struct {
	id      string
	simhash uint64
	stamp   uint32 // candidates' epoch that last reported the slot
	part    int32
	bands   []uint32 // band hashes
	fps     []uint32 // sentence fingerprints (Huang et al.)
	lengths []uint32
}

// posting is one group under one key.
type posting struct {
	slot int32
	next int32 // next posting of the key, -1 at the end
	part int32
}

// index holds the candidate tables of group representatives: an
// open-addressing hash table from key to the head of a singly linked
// posting list. Not safe for concurrent use.
type index struct {
	part *partition.Partitioner // nil: every group in partition -1
	tau  float64
	gate int // simhash distance beyond which the decision never matches; <0 none
	// reach is the simhash distance within which a group found through a
	// simhash block is a candidate: simhashReach or gate, the smaller;
	// <0 none.
	reach int

	slots []slot
	free  []int32
	byID  map[string]int32

	ent   []uint64 // key<<32 | head+1; 0 is an empty entry
	used  int      // entries with a key, empty lists included
	posts []posting
	pfree []int32 // free postings, linked through next

	epoch   uint32
	allowed []uint64 // bitset of the partitions a candidates call scans
	bands   []uint32 // scratch of candidates
}

// newIndex returns an empty index sized for about groups groups.
func newIndex(p *partition.Partitioner, tau float64, gate, reach, groups int) *index {
	r := gate
	if reach >= 0 && (gate < 0 || reach < gate) {
		r = reach
	}
	n := 64
	for n*3/4 < groups*(simhashBlocks+84/bandRows+2) {
		n *= 2
	}
	return &index{
		part: p, tau: tau, gate: gate, reach: r,
		byID:  make(map[string]int32, groups),
		ent:   make([]uint64, n),
		slots: make([]slot, 0, groups),
	}
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func tableKey(table int, v uint64) uint32 {
	k := uint32(mix64(v ^ mix64(uint64(table)<<8|1)))
	if k == 0 {
		k = 1 // 0 marks an empty entry; a collision only adds candidates
	}
	return k
}

func appendBandHashes(out []uint32, s *similarity.Signature) []uint32 {
	n := len(s.MinHash) / bandRows
	for b := range n {
		h := uint64(b + 1)
		for _, v := range s.MinHash[b*bandRows : (b+1)*bandRows] {
			h = mix64(h ^ uint64(v))
		}
		out = append(out, uint32(h))
	}
	return out
}

// keys calls fn with every table key of a representative.
func keys(simhash uint64, bands, fps []uint32, fn func(uint32)) {
	for b := range simhashBlocks {
		fn(tableKey(b, simhash>>(16*b)&0xffff))
	}
	for i, h := range bands {
		fn(tableKey(simhashBlocks+i, uint64(h)))
	}
	for _, f := range fps {
		fn(tableKey(fingerprintTable, uint64(f)))
	}
}

func (x *index) partition(lengths []uint32) int32 {
	if x.part == nil {
		return -1
	}
	return int32(x.part.Partition(lengths))
}

func (x *index) len() int { return len(x.byID) }

// find returns the position of key k in ent, or of the empty entry where
// it belongs.
func (x *index) find(k uint32) int {
	mask := len(x.ent) - 1
	i := int(uint64(k)*0x9e3779b97f4a7c15>>32) & mask
	for {
		e := x.ent[i]
		if e == 0 || uint32(e>>32) == k {
			return i
		}
		i = (i + 1) & mask
	}
}

// grow rehashes ent, dropping keys whose lists are empty, at twice the
// size unless those were many.
func (x *index) grow() {
	old := x.ent
	live := 0
	for _, e := range old {
		if uint32(e) != 0 {
			live++
		}
	}
	n := len(old)
	if live*2 > n {
		n *= 2
	}
	x.ent = make([]uint64, n)
	x.used = 0
	for _, e := range old {
		if uint32(e) != 0 {
			x.ent[x.find(uint32(e>>32))] = e
			x.used++
		}
	}
}

// post adds slot i of partition part under key k.
func (x *index) post(k uint32, i, part int32) {
	if (x.used+1)*4 > len(x.ent)*3 {
		x.grow()
	}
	pos := x.find(k)
	e := x.ent[pos]
	if e == 0 {
		x.used++
	}
	var p int32
	if n := len(x.pfree); n > 0 {
		p = x.pfree[n-1]
		x.pfree = x.pfree[:n-1]
	} else {
		p = int32(len(x.posts))
		x.posts = append(x.posts, posting{})
	}
	x.posts[p] = posting{slot: i, next: int32(uint32(e)) - 1, part: part}
	x.ent[pos] = uint64(k)<<32 | uint64(uint32(p+1))
}

// unpost removes slot i from the list of key k.
func (x *index) unpost(k uint32, i int32) {
	pos := x.find(k)
	e := x.ent[pos]
	if e == 0 {
		return
	}
	prev := int32(-1)
	for p := int32(uint32(e)) - 1; p >= 0; p = x.posts[p].next {
		if x.posts[p].slot != i {
			prev = p
			continue
		}
		next := x.posts[p].next
		if prev < 0 {
			x.ent[pos] = uint64(k)<<32 | uint64(uint32(next+1))
		} else {
			x.posts[prev].next = next
		}
		x.pfree = append(x.pfree, p)
		return
	}
}

// add enters group id with representative s, replacing its old entry.
func (x *index) add(id string, s *similarity.Signature) {
	x.remove(id)
	if s == nil || s.Empty() {
		return
	}
	sl := slot{id: id, simhash: s.Simhash, bands: appendBandHashes(nil, s), fps: s.Fingerprints, lengths: s.Lengths}
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

func (x *index) insert(i int32) {
	sl := &x.slots[i]
	part := sl.part
	keys(sl.simhash, sl.bands, sl.fps, func(k uint32) { x.post(k, i, part) })
}

// remove drops group id, if present.
func (x *index) remove(id string) {
	i, ok := x.byID[id]
	if !ok {
		return
	}
	sl := &x.slots[i]
	keys(sl.simhash, sl.bands, sl.fps, func(k uint32) { x.unpost(k, i) })
	delete(x.byID, id)
	x.slots[i] = slot{}
	x.free = append(x.free, i)
}

// repartition re-enters every group under partitioner p.
func (x *index) repartition(p *partition.Partitioner) {
	x.part = p
	clear(x.ent)
	x.used = 0
	x.posts = x.posts[:0]
	x.pfree = x.pfree[:0]
	for _, i := range x.byID {
		x.slots[i].part = x.partition(x.slots[i].lengths)
		x.insert(i)
	}
}

// candidates calls fn once with the ID of every group that shares a table
// key with s, lies in a partition that may hold its near-duplicates (Zhu
// §4 bound; partition.Partitioner.Candidates), and whose simhash is
// within the decision's gate of s's (a pair beyond it never matches).
func (x *index) candidates(s *similarity.Signature, fn func(id string)) {
	if len(x.byID) == 0 {
		return
	}
	x.epoch++
	if x.epoch == 0 { // wrapped: forget every stamp
		for i := range x.slots {
			x.slots[i].stamp = 0
		}
		x.epoch = 1
	}
	filter := x.part != nil
	if filter {
		n := (x.part.Parts() + 63) / 64
		if cap(x.allowed) < n {
			x.allowed = make([]uint64, n)
		}
		x.allowed = x.allowed[:n]
		clear(x.allowed)
		for _, p := range x.part.Candidates(s.Lengths, x.tau) {
			x.allowed[p/64] |= 1 << (p % 64)
		}
	}
	x.bands = appendBandHashes(x.bands[:0], s)
	scan := func(k uint32, reach int) {
		e := x.ent[x.find(k)]
		for p := int32(uint32(e)) - 1; p >= 0; p = x.posts[p].next {
			ps := &x.posts[p]
			if filter && x.allowed[ps.part/64]&(1<<(ps.part%64)) == 0 {
				continue
			}
			sl := &x.slots[ps.slot]
			if sl.stamp == x.epoch {
				continue
			}
			if reach >= 0 && bits.OnesCount64(sl.simhash^s.Simhash) > reach {
				continue
			}
			sl.stamp = x.epoch
			fn(sl.id)
		}
	}
	for b := range simhashBlocks {
		scan(tableKey(b, s.Simhash>>(16*b)&0xffff), x.reach)
	}
	for i, h := range x.bands {
		scan(tableKey(simhashBlocks+i, uint64(h)), x.gate)
	}
	for _, f := range s.Fingerprints {
		scan(tableKey(fingerprintTable, uint64(f)), x.gate)
	}
}
