package similarity

import (
	"github.com/winnow-search/winnow/internal/hashmix"
	"iter"
	"math/bits"
)

// Content-defined chunking with a gear rolling hash (Xia et al., "FastCDC",
// USENIX ATC 2016) and the jumps of JC (Jin et al., IEEE TPDS 2023),
// standing in for the Rabin fingerprints of LBFS that Jain §2.2 uses: a
// boundary depends only on the bytes before it, so an edit moves at most
// the chunks near it.
//
// The hash is h = h<<1 + gear[b]; bit j of h depends on the last j+1 bytes
// alone, so the tests look at the top bits of its low gearWindow bits (a
// 16-byte window). No cut falls before ChunkMin. Past it the scan looks for
// a jump point, a position whose window has its top c−1 bits zero (one in
// 2^(c−1)); if bit c is zero too it is a cut (half the jump points),
// otherwise the scan skips the next jump bytes and goes on. With c =
// log2(ChunkAvg)−2 and jump = ChunkAvg − ChunkMin − 2^c the mean chunk is
// ChunkMin + 2^c hashed bytes + one jump on average = ChunkAvg (64 + 64 +
// 128 = 256 bytes with the defaults), and only about a quarter of the bytes
// is hashed (FastCDC's normalized chunking, used before, hashed three
// quarters). A scan that restarts (after ChunkMin or a jump) first rolls
// the hash over the window's bytes before it, so whether a position is a
// jump point or a cut depends on the content alone, not on where a scan
// started: two copies of a text that differ in one place fall back in step
// at the first jump point both scans reach after the edit.
// Cost: one table load, a shift-add and a test per hashed byte, plus the
// 16 bytes of each restart.

// gear is the table of the rolling hash: 256 values of splitmix64 from a
// fixed seed, so chunk boundaries never change between builds.
var gear = func() (t [256]uint64) {
	x := uint64(0x5157_4e4e_4f57_4344) // "WNNOWCD" seed; any fixed value works
	for i := range t {
		x += 0x9e3779b97f4a7c15
		t[i] = hashmix.Mix64(x)
	}
	return t
}()

// chunker holds the cut parameters derived from [Options].
type chunker struct {
	min, max int
	jump     int    // bytes skipped after a jump point that is not a cut
	maskJump uint64 // the top c−1 bits of the window: a jump point
	maskCut  uint64 // the top c bits of the window: a cut
}

// gearWindow is the number of bytes the cut tests see: they look at bits
// below gearWindow only, so whether a position is a jump point or a cut is
// a function of the gearWindow bytes ending there. Sixteen bytes are about
// three words of text, enough that jump points fall where the text
// differs, and few to roll again at each restart.
const gearWindow = 16

func newChunker(o Options) chunker {
	b := bits.TrailingZeros(uint(o.ChunkAvg))
	c := min(max(b-2, 2), gearWindow)
	return chunker{
		min:      o.ChunkMin,
		max:      o.ChunkMax,
		jump:     max(o.ChunkAvg-o.ChunkMin-1<<c, 0),
		maskJump: (1<<(c-1) - 1) << (gearWindow - (c - 1)),
		maskCut:  (1<<c - 1) << (gearWindow - c),
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
	for i := c.min; i < n; {
		k, h := gearScan(data[i:n], gearWarm(data[max(i-gearWindow, 0):i]), c.maskJump)
		if k < 0 {
			break
		}
		if i += k; h&c.maskCut == 0 {
			return i
		}
		i += c.jump
	}
	return n
}

// gearWarm returns the gear hash of d, rolled from 0 without tests.
func gearWarm(d []byte) uint64 {
	var h uint64
	for _, b := range d {
		h = h*2 + gear[b]
	}
	return h
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

// fastRange maps the high 32 bits of x uniformly onto [0, n) without a
// division (Lemire).
func fastRange(x uint64, n int) int {
	return int(((x >> 32) * uint64(n)) >> 32)
}
