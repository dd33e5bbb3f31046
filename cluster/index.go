package cluster

import (
	"github.com/winnow-search/winnow/internal/hashmix"
	"math"
	"math/bits"
	"strconv"

	"github.com/winnow-search/winnow/cluster/partition"
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
// The partition is not part of the key: every key has one run of postings
// over all partitions, and the partition of each posting's group is read
// from its slot, so a page costs one hash lookup per key however many
// partitions the length-vector bound allows, and the bound filters while
// the postings are scanned (Zhu's partitions then bound the comparisons,
// not the lookups).
//
// The simhash tables serve the pairs within simhashReach bits: a group
// found only through a simhash block is a candidate when its simhash is
// that close to the page's. Farther ones sharing a 16-bit block by chance
// are many (with 1 M groups about 15 per block value) and would cost a
// comparison each; a near-duplicate among them is still found through a
// band or a sentence fingerprint it shares (see the recall measurement
// in TestSimhashReachRecall).
//
// Memory: every structure is a flat slice without pointers, so no group
// costs a heap object of its own and the collector does not scan the
// tables. A group takes a 40-byte slot, its words in the arena (length
// vector, band hashes and sentence fingerprints, 4 bytes each: 76 bytes
// with 84 min-hashes, 3 dimensions and no sentences), a 4-byte entry of
// the group-number table at load 1/4 to 1/2, and one 8-byte posting per
// key (4 simhash blocks, 16 bands, up to 8 fingerprints) in one
// open-addressing table at load 0.53 to 0.8 (0.7 after a restart). With
// 750 k groups of synthetic signatures that is 320 MB of heap
// (BenchmarkIngest1M; 280 MB after a restart), where a string ID, three
// slices and linked postings a group took 507 MB.
const (
	simhashReach     = 3
	simhashBlocks    = 4
	bandRows         = 5
	fingerprintTable = 255
)

// Load limits of the open-addressing tables, as fractions num/den.
const (
	postsLoadNum, postsLoadDen = 4, 5
	minTable                   = 64
)

// slot is one indexed group.
type slot struct {
	gid     uint64 // group number (see gidOf); 0 marks a free slot
	simhash uint64
	stamp   uint32 // candidates' epoch that last reported the slot
	part    int32
	off     uint32 // start of the slot's words in arena
	// nl, nb and nf count the slot's words: its length vector, its band
	// hashes and its sentence fingerprints, in this order.
	nl, nb, nf uint16
}

// index holds the candidate tables of group representatives. Not safe for
// concurrent use.
type index struct {
	part *partition.Partitioner // nil: every group in partition -1
	tau  float64
	gate int // simhash distance beyond which the decision never matches; <0 none
	// reach is the simhash distance within which a group found through a
	// simhash block is a candidate: simhashReach or gate, the smaller;
	// <0 none.
	reach int

	slots []slot
	free  []int32  // free slots
	live  int      // slots in use
	arena []uint32 // the slots' words
	dead  int      // words of arena no slot uses

	// ids maps a group number to its slot: slot+1 at the position found
	// by linear probing from the number's hash, 0 for an empty entry. Its
	// length is a power of two.
	ids []int32
	// names holds group IDs that groupID did not make, under stand-in
	// numbers counted down from math.MaxUint64, and nameGID the reverse.
	names    map[uint64]string
	nameGID  map[string]uint64
	lastName uint64

	// posts is a multimap from key to slot by linear probing: an entry is
	// key<<32 | slot+1, 0 when empty, and the entries of a key lie in the
	// run that starts at the key's home position.
	posts []uint64
	npost int

	epoch   uint32
	allowed []uint64 // bitset of the partitions a candidates call scans
	bands   []uint32 // scratch of add and candidates
}

// newIndex returns an empty index with room for about groups slots.
func newIndex(p *partition.Partitioner, tau float64, gate, reach, groups int) *index {
	r := gate
	if reach >= 0 && (gate < 0 || reach < gate) {
		r = reach
	}
	ids := minTable
	for ids < 2*groups {
		ids *= 2
	}
	return &index{
		part: p, tau: tau, gate: gate, reach: r,
		slots: make([]slot, 0, groups),
		ids:   make([]int32, ids),
		posts: make([]uint64, minTable), // postAll sizes it for a bulk load
	}
}

func tableKey(table int, v uint64) uint32 {
	k := uint32(hashmix.Mix64(v ^ hashmix.Mix64(uint64(table)<<8|1)))
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
			h = hashmix.Mix64(h ^ uint64(v))
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

func (x *index) len() int { return x.live }

// Group numbers. A group ID that groupID made ("g" and the number in
// lower-case base 36 without leading zeros, below 2^63) is kept as its
// number; any other ID gets a stand-in number from the top of the range.

// parseGroupID returns the number groupID made id from.
func parseGroupID(id string) (uint64, bool) {
	if len(id) < 2 || len(id) > 14 || id[0] != 'g' || id[1] == '0' {
		return 0, false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(id[1:], 36, 64)
	if err != nil || n == 0 || n >= 1<<63 {
		return 0, false
	}
	return n, true
}

// gidOf returns the number of group id; with create, an ID that groupID
// did not make gets a stand-in number if it has none.
func (x *index) gidOf(id string, create bool) (uint64, bool) {
	if n, ok := parseGroupID(id); ok {
		return n, true
	}
	if n, ok := x.nameGID[id]; ok {
		return n, true
	}
	if !create {
		return 0, false
	}
	if x.names == nil {
		x.names, x.nameGID, x.lastName = map[uint64]string{}, map[string]uint64{}, math.MaxUint64
	}
	for x.names[x.lastName] != "" {
		x.lastName--
	}
	n := x.lastName
	x.names[n], x.nameGID[id] = id, n
	return n, true
}

// groupName returns the ID of group number n.
func (x *index) groupName(n uint64) string {
	if n >= 1<<63 {
		return x.names[n]
	}
	return groupID(n)
}

// findID returns the position of group number n in ids and its slot, or
// the empty position where it belongs and -1.
func (x *index) findID(n uint64) (int, int32) {
	mask := len(x.ids) - 1
	for p := int(hashmix.Mix64(n)) & mask; ; p = (p + 1) & mask {
		e := x.ids[p]
		if e == 0 {
			return p, -1
		}
		if x.slots[e-1].gid == n {
			return p, e - 1
		}
	}
}

func (x *index) setID(n uint64, i int32) {
	if (x.live+1)*2 > len(x.ids) {
		old := x.ids
		x.ids = make([]int32, 2*len(old))
		for _, e := range old {
			if e != 0 {
				p, _ := x.findID(x.slots[e-1].gid)
				x.ids[p] = e
			}
		}
	}
	p, _ := x.findID(n)
	x.ids[p] = i + 1
}

// deleteID empties position p of ids, shifting back the entries of its
// run that probed past it (Knuth 6.4, Algorithm R).
func (x *index) deleteID(p int) {
	mask := len(x.ids) - 1
	j := p
	for q := (p + 1) & mask; x.ids[q] != 0; q = (q + 1) & mask {
		h := int(hashmix.Mix64(x.slots[x.ids[q]-1].gid)) & mask
		if (j-h)&mask < (q-h)&mask {
			x.ids[j] = x.ids[q]
			j = q
		}
	}
	x.ids[j] = 0
}

// home returns the position in posts where the run of key k starts.
func (x *index) home(k uint32) int {
	return int(uint64(k) * uint64(len(x.posts)) >> 32)
}

// post adds slot i under key k.
func (x *index) post(k uint32, i int32) {
	if (x.npost+1)*postsLoadDen > len(x.posts)*postsLoadNum {
		x.growPosts()
	}
	x.put(uint64(k)<<32 | uint64(uint32(i+1)))
	x.npost++
}

// put enters e in posts at the first empty position of its run.
func (x *index) put(e uint64) {
	n := len(x.posts)
	p := x.home(uint32(e >> 32))
	for x.posts[p] != 0 {
		if p++; p == n {
			p = 0
		}
	}
	x.posts[p] = e
}

// growPosts rehashes posts at one and a half times its size.
func (x *index) growPosts() {
	old := x.posts
	x.posts = make([]uint64, max(minTable, len(old)+len(old)/2))
	for _, e := range old {
		if e != 0 {
			x.put(e)
		}
	}
}

// unpost removes slot i from key k, shifting back the entries of the run
// that probed past it (Knuth 6.4, Algorithm R).
func (x *index) unpost(k uint32, i int32) {
	n := len(x.posts)
	want := uint64(k)<<32 | uint64(uint32(i+1))
	p := x.home(k)
	for x.posts[p] != want {
		if x.posts[p] == 0 {
			return
		}
		if p++; p == n {
			p = 0
		}
	}
	x.npost--
	j := p
	for {
		if p++; p == n {
			p = 0
		}
		e := x.posts[p]
		if e == 0 {
			break
		}
		// e may stay unless the hole lies between its home and p.
		h := x.home(uint32(e >> 32))
		if (j-h+n)%n < (p-h+n)%n {
			x.posts[j] = e
			j = p
		}
	}
	x.posts[j] = 0
}

// words returns the length vector, band hashes and sentence fingerprints
// of sl; they alias arena.
func (x *index) words(sl *slot) (lengths, bands, fps []uint32) {
	w := x.arena[sl.off : sl.off+uint32(sl.nl)+uint32(sl.nb)+uint32(sl.nf)]
	return w[:sl.nl], w[sl.nl : sl.nl+sl.nb], w[sl.nl+sl.nb:]
}

// add enters group id with representative s, replacing its old entry.
func (x *index) add(id string, s *similarity.Signature) {
	x.remove(id)
	if i := x.addSlot(id, s); i >= 0 {
		x.postSlot(i)
	}
}

// addSlot enters group id, which must not be in the index, with
// representative s, without its postings, and returns its slot; -1 for
// an empty s.
func (x *index) addSlot(id string, s *similarity.Signature) int32 {
	if s == nil || s.Empty() {
		return -1
	}
	n, _ := x.gidOf(id, true)
	x.bands = appendBandHashes(x.bands[:0], s)
	sl := slot{
		gid: n, simhash: s.Simhash, part: x.partition(s.Lengths), off: uint32(len(x.arena)),
		nl: uint16(len(s.Lengths)), nb: uint16(len(x.bands)), nf: uint16(len(s.Fingerprints)),
	}
	x.arena = append(x.arena, s.Lengths...)
	x.arena = append(x.arena, x.bands...)
	x.arena = append(x.arena, s.Fingerprints...)
	var i int32
	if k := len(x.free); k > 0 {
		i = x.free[k-1]
		x.free = x.free[:k-1]
		x.slots[i] = sl
	} else {
		i = int32(len(x.slots))
		x.slots = append(x.slots, sl)
	}
	x.setID(n, i)
	x.live++
	return i
}

// postSlot enters the postings of slot i.
func (x *index) postSlot(i int32) {
	sl := &x.slots[i]
	_, bands, fps := x.words(sl)
	keys(sl.simhash, bands, fps, func(k uint32) { x.post(k, i) })
}

// postAll enters the postings of every slot into posts sized for them at
// load 0.7, after slots were entered with addSlot.
func (x *index) postAll() {
	n := 0
	for i := range x.slots {
		if sl := &x.slots[i]; sl.gid != 0 {
			n += simhashBlocks + int(sl.nb) + int(sl.nf)
		}
	}
	x.posts, x.npost = make([]uint64, max(minTable, n*10/7)), 0
	for i := range x.slots {
		if x.slots[i].gid != 0 {
			x.postSlot(int32(i))
		}
	}
}

// remove drops group id, if present.
func (x *index) remove(id string) {
	n, ok := x.gidOf(id, false)
	if !ok {
		return
	}
	p, i := x.findID(n)
	if i < 0 {
		return
	}
	sl := &x.slots[i]
	_, bands, fps := x.words(sl)
	keys(sl.simhash, bands, fps, func(k uint32) { x.unpost(k, i) })
	x.deleteID(p)
	x.dead += int(sl.nl) + int(sl.nb) + int(sl.nf)
	*sl = slot{}
	x.free = append(x.free, i)
	x.live--
	if n >= 1<<63 {
		delete(x.names, n)
		delete(x.nameGID, id)
	}
	if x.dead > 4096 && x.dead*2 > len(x.arena) {
		x.compact()
	}
}

// compact copies the live slots' words into a new arena.
func (x *index) compact() {
	a := make([]uint32, 0, len(x.arena)-x.dead)
	for i := range x.slots {
		sl := &x.slots[i]
		if sl.gid == 0 {
			continue
		}
		w := x.arena[sl.off : sl.off+uint32(sl.nl)+uint32(sl.nb)+uint32(sl.nf)]
		sl.off = uint32(len(a))
		a = append(a, w...)
	}
	x.arena, x.dead = a, 0
}

// repartition moves every group to its partition under p.
func (x *index) repartition(p *partition.Partitioner) {
	x.part = p
	for i := range x.slots {
		if sl := &x.slots[i]; sl.gid != 0 {
			lengths, _, _ := x.words(sl)
			sl.part = x.partition(lengths)
		}
	}
}

// candidates calls fn once with the ID of every group that shares a table
// key with s, lies in a partition that may hold its near-duplicates (Zhu
// §4 bound; partition.Partitioner.Candidates), and whose simhash is
// within the decision's gate of s's (a pair beyond it never matches).
func (x *index) candidates(s *similarity.Signature, fn func(id string)) {
	if x.live == 0 {
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
	n := len(x.posts)
	scan := func(k uint32, reach int) {
		for p := x.home(k); x.posts[p] != 0; {
			if e := x.posts[p]; uint32(e>>32) == k {
				sl := &x.slots[int32(uint32(e))-1]
				if sl.stamp != x.epoch &&
					(!filter || x.allowed[sl.part/64]&(1<<(sl.part%64)) != 0) &&
					(reach < 0 || bits.OnesCount64(sl.simhash^s.Simhash) <= reach) {
					sl.stamp = x.epoch
					fn(x.groupName(sl.gid))
				}
			}
			if p++; p == n {
				p = 0
			}
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
