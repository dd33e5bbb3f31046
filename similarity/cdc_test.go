package similarity

import (
	"bytes"
	cdcchunkers "github.com/PlakarKorp/go-cdc-chunkers"
	"github.com/PlakarKorp/go-cdc-chunkers/chunkers/jc"
	"math/rand/v2"
	"testing"
)

func TestChunksCover(t *testing.T) {
	in := sigCorpus(t)
	o := Options{}.WithDefaults()
	var joined []byte
	n := 0
	for c := range Chunks(in.Text, Options{}) {
		joined = append(joined, c...)
		n++
		last := len(joined) == len(in.Text)
		if len(c) > o.ChunkMax || (!last && len(c) < o.ChunkMin) {
			t.Errorf("chunk of %d bytes, want %d..%d", len(c), o.ChunkMin, o.ChunkMax)
		}
	}
	if !bytes.Equal(joined, in.Text) {
		t.Fatalf("chunks do not cover the text")
	}
	// The mean chunk size on real text is within 25% of ChunkAvg.
	mean := float64(len(in.Text)) / float64(n)
	if mean < 0.75*float64(o.ChunkAvg) || mean > 1.25*float64(o.ChunkAvg) {
		t.Errorf("mean chunk size = %.0f, want %d ± 25%%", mean, o.ChunkAvg)
	}
	t.Logf("%d bytes, %d chunks, mean %.0f", len(in.Text), n, mean)
}

func TestChunksBounds(t *testing.T) {
	in := sigCorpus(t)
	o := Options{ChunkMin: 16, ChunkAvg: 64, ChunkMax: 64}
	total := 0
	for c := range Chunks(in.Text, o) {
		total += len(c)
		if len(c) > 64 || (total < len(in.Text) && len(c) < 16) {
			t.Errorf("chunk of %d bytes, want 16..64", len(c))
		}
	}
	if total != len(in.Text) {
		t.Errorf("chunks cover %d bytes, want %d", total, len(in.Text))
	}
}

// An edit in the middle of a text changes only the chunks around it.
func TestChunksLocality(t *testing.T) {
	in := sigCorpus(t)
	r := rand.New(rand.NewPCG(1, 2))
	set := func(b []byte) map[string]int {
		m := map[string]int{}
		for c := range Chunks(b, Options{}) {
			m[string(c)]++
		}
		return m
	}
	a := set(in.Text)
	const trials = 50
	sum := 0
	for range trials {
		b := bytes.Clone(in.Text)
		b[r.IntN(len(b))] ^= 0x20
		changed := 0
		for c, n := range set(b) {
			if a[c] < n {
				changed++
			}
		}
		sum += changed
		if changed > 6 {
			t.Errorf("one byte edit changed %d chunks, want <= 6", changed)
		}
	}
	mean := float64(sum) / trials
	if mean > 3 {
		t.Errorf("one byte edit changed %.1f chunks on average, want <= 3", mean)
	}
	t.Logf("one byte edit changed %.2f chunks on average", mean)
}

// BenchmarkCDC chunks the same real texts on one core with winnow's
// chunker (the gear hash over a 16-byte window with jumps, sizes of the
// default Options) and with go-cdc-chunkers' JC (Jin et al., TPDS 2023:
// the gear hash with a jump of jumpLength bytes after each jump-mask
// match), given the same minimum and average sizes and called on the
// in-memory text as winnow's is. B/chunk is the mean chunk size each
// produced (JC's overshoots NormalSize: its chunks are larger).
func BenchmarkCDC(b *testing.B) {
	in := sigCorpus(b)
	o := Options{}.WithDefaults()
	b.Run("winnow", func(b *testing.B) {
		c := newChunker(o)
		b.SetBytes(int64(len(in.Text)))
		b.ReportAllocs()
		chunks := 0
		for b.Loop() {
			for data := in.Text; len(data) > 0; chunks++ {
				data = data[c.cut(data):]
			}
		}
		b.ReportMetric(float64(len(in.Text))*float64(b.N)/float64(chunks), "B/chunk")
	})
	b.Run("jc", func(b *testing.B) {
		opts := &cdcchunkers.ChunkerOpts{MinSize: o.ChunkMin, NormalSize: o.ChunkAvg, MaxSize: o.ChunkMax}
		var c jc.JC
		if err := c.Validate(opts); err != nil {
			b.Fatal(err)
		}
		if err := c.Setup(opts); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(in.Text)))
		b.ReportAllocs()
		chunks := 0
		for b.Loop() {
			for data := in.Text; len(data) > 0; chunks++ {
				data = data[max(c.Algorithm(opts, data, len(data)), 1):]
			}
		}
		b.ReportMetric(float64(len(in.Text))*float64(b.N)/float64(chunks), "B/chunk")
	})
}

// gearScanBytewise is gearScan one byte at a time, the definition the
// unrolled loop must agree with.
func gearScanBytewise(d []byte, h, mask uint64) (int, uint64) {
	for i, b := range d {
		if h = h*2 + gear[b]; h&mask == 0 {
			return i + 1, h
		}
	}
	return -1, h
}

func TestGearScanBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	in := sigCorpus(t)
	for _, bitsSet := range []int{1, 4, 7, 8, 12} {
		mask := ^uint64(0) << (64 - bitsSet)
		for range 2000 {
			var d []byte
			if r.IntN(2) == 0 {
				at := r.IntN(len(in.Text))
				d = in.Text[at:min(len(in.Text), at+r.IntN(600))]
			} else {
				d = make([]byte, r.IntN(600))
				for i := range d {
					d[i] = byte(r.IntN(256))
				}
			}
			h0 := r.Uint64()
			gotCut, gotH := gearScan(d, h0, mask)
			wantCut, wantH := gearScanBytewise(d, h0, mask)
			if gotCut != wantCut || gotH != wantH {
				t.Fatalf("gearScan(%d bytes, mask of %d bits) = %d, %x; byte by byte %d, %x", len(d), bitsSet, gotCut, gotH, wantCut, wantH)
			}
		}
	}
}

// cutBytewise is the definition of chunker.cut, one position at a time:
// a chunk of length p > ChunkMin ends at the first jump point p (the gear
// hash of the gearWindow bytes before p has the maskJump bits zero) that
// is also a cut, where the positions after a jump point that is not a cut
// are skipped for c.jump bytes.
func cutBytewise(c *chunker, data []byte) int {
	if len(data) <= c.min {
		return len(data)
	}
	n := min(len(data), c.max)
	for p := c.min + 1; p <= n; p++ {
		h := gearWarm(data[max(p-gearWindow, 0):p])
		if h&c.maskJump != 0 {
			continue
		}
		if h&c.maskCut == 0 {
			return p
		}
		p += c.jump
	}
	return n
}

func TestCutBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	in := sigCorpus(t)
	for _, o := range []Options{{}, {ChunkMin: 16, ChunkAvg: 64, ChunkMax: 256}, {ChunkMin: 4, ChunkAvg: 32, ChunkMax: 100}, {ChunkMin: 512, ChunkAvg: 4096, ChunkMax: 1 << 14}} {
		c := newChunker(o.WithDefaults())
		for trial := range 300 {
			var d []byte
			if trial%2 == 0 {
				at := r.IntN(len(in.Text))
				d = in.Text[at:min(len(in.Text), at+r.IntN(3*c.max))]
			} else {
				d = make([]byte, r.IntN(3*c.max))
				for i := range d {
					d[i] = byte(r.IntN(256))
				}
			}
			for len(d) > 0 {
				got, want := c.cut(d), cutBytewise(&c, d)
				if got != want {
					t.Fatalf("options %+v: cut(%d bytes) = %d, byte by byte %d", o, len(d), got, want)
				}
				d = d[got:]
			}
		}
	}
}

// FuzzCut checks the unrolled chunker against its definition, one
// position at a time, on any data and small chunk sizes.
func FuzzCut(f *testing.F) {
	f.Add([]byte("the quick brown fox jumps over the lazy dog, again and again and again"), uint8(4), uint8(3), uint8(50))
	f.Fuzz(func(t *testing.T, data []byte, minSize, avgBits, maxSize uint8) {
		o := Options{ChunkMin: int(minSize%64) + 1, ChunkAvg: 1 << (avgBits%8 + 2)}
		o.ChunkMax = o.ChunkAvg + int(maxSize)
		c := newChunker(o.WithDefaults())
		for len(data) > 0 {
			got, want := c.cut(data), cutBytewise(&c, data)
			if got != want {
				t.Fatalf("options %+v: cut(%q) = %d, byte by byte %d", o, data, got, want)
			}
			data = data[got:]
		}
	})
}
