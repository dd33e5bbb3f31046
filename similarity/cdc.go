package similarity

import (
	"iter"
	"math/bits"
)

// Content-defined chunking with a gear rolling hash and normalized
// chunking (Xia et al., "FastCDC", USENIX ATC 2016), standing in for the
// Rabin fingerprints of LBFS that Jain §2.2 uses: a boundary depends only on
// the bytes before it, so an edit moves at most the chunks around it.
//
// The hash is h = h<<1 + gear[b]; bit j of h depends on the last j+1 bytes,
// so the cut test looks at the top bits of h (a 64-byte window). No cut
// falls before ChunkMin; between ChunkMin and ChunkAvg a cut needs
// log2(ChunkAvg) zero bits and past ChunkAvg one fewer, which narrows the
// size distribution and keeps the mean near ChunkAvg: with the defaults
// E = 64 + 256·(1−e^−0.75) + e^−0.75·128 ≈ 260 bytes on random data.
// Cost: one table load, a shift-add and a test per byte.

// gear is the table of the rolling hash: 256 values of splitmix64 from a
// fixed seed, so chunk boundaries never change between builds.
var gear = func() (t [256]uint64) {
	x := uint64(0x5157_4e4e_4f57_4344) // "WNNOWCD" seed; any fixed value works
	for i := range t {
		x += 0x9e3779b97f4a7c15
		t[i] = mix64(x)
	}
	return t
}()

// chunker holds the cut parameters derived from [Options].
type chunker struct {
	min, avg, max int
	maskS, maskL  uint64 // top-bit masks before and after avg
}

func newChunker(o Options) chunker {
	b := bits.TrailingZeros(uint(o.ChunkAvg))
	return chunker{
		min:   o.ChunkMin,
		avg:   o.ChunkAvg,
		max:   o.ChunkMax,
		maskS: ^uint64(0) << (64 - b),
		maskL: ^uint64(0) << (64 - (b - 1)),
	}
}

// cut returns the length of the first chunk of data.
func (c *chunker) cut(data []byte) int {
	n := len(data)
	if n <= c.min {
		return n
	}
	if n > c.max {
		n = c.max
	}
	end := min(c.avg, n)
	cut, h := gearScan(data[c.min:end], 0, c.maskS)
	if cut >= 0 {
		return c.min + cut
	}
	if cut, _ = gearScan(data[end:n], h, c.maskL); cut >= 0 {
		return end + cut
	}
	return n
}

// gearScan rolls the gear hash h over d and returns the length of the
// prefix of d after which h&mask == 0, or −1, and the final h. Two bytes
// per step: h2 = 4h + 2g0 + g1 depends on h through one LEA, and the test
// of the middle value is off that chain, so the loop runs near one cycle
// per byte.
func gearScan(d []byte, h, mask uint64) (int, uint64) {
	g := &gear
	n := len(d)
	for len(d) >= 2 {
		g0, g1 := g[d[0]], g[d[1]]
		h1 := h*2 + g0
		h = h*4 + (g0*2 + g1)
		if h1&mask == 0 {
			return n - len(d) + 1, h1
		}
		if h&mask == 0 {
			return n - len(d) + 2, h
		}
		d = d[2:]
	}
	if len(d) == 1 {
		if h = h*2 + g[d[0]]; h&mask == 0 {
			return n, h
		}
	}
	return -1, h
}

// Chunks yields the content-defined chunks of data with the chunk sizes of
// o (defaults applied). The chunks are subslices of data; they cover it in
// order. Options must be valid; see [Options.Validate].
func Chunks(data []byte, o Options) iter.Seq[[]byte] {
	c := newChunker(o.WithDefaults())
	return func(yield func([]byte) bool) {
		for len(data) > 0 {
			n := c.cut(data)
			if !yield(data[:n]) {
				return
			}
			data = data[n:]
		}
	}
}

// mix64 is the murmur3 64-bit finalizer: a bijection with full avalanche.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// fastRange maps the high 32 bits of x uniformly onto [0, n) without a
// division (Lemire).
func fastRange(x uint64, n int) int {
	return int(((x >> 32) * uint64(n)) >> 32)
}
