package page

import (
	"bytes"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"testing"
	"unicode"
	"unicode/utf8"

	cdcchunkers "github.com/PlakarKorp/go-cdc-chunkers"
	"github.com/PlakarKorp/go-cdc-chunkers/chunkers/jc"
	"github.com/zeebo/xxh3"
	"golang.org/x/net/html"

	"github.com/winnow-search/winnow/similarity"
)

// savedPages reads canon's saved real pages.
func savedPages(b *testing.B) ([][]byte, int64) {
	b.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "canon", "testdata", "pages", "*.html"))
	if len(paths) == 0 {
		b.Fatal("no saved pages under ../canon/testdata/pages")
	}
	var pages [][]byte
	var n int64
	for _, p := range paths {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, d)
		n += int64(len(d))
	}
	return pages, n
}

// BenchmarkPage turns each saved real page into its signature on one
// core, side by side: winnow's Signer (canon's canonical text, tokens and
// sentences, then every signature family), and the best peers composed
// into the same job: the x/net/html tokenizer's text tokens (script and
// style skipped), words split and lower-cased, hashed with xxh3; JC
// chunks of the text (go-cdc-chunkers) hashed into a Bloom-sized bit set;
// a one-permutation min-hash of 84 bins over 5-word shingles (Li, Owen,
// Zhang 2012, empty bins filled by rotation); a byte-sliced simhash over
// 3-word shingles (8 counters a machine word, a table lookup a byte). The
// peers do less than winnow (no charset sniffing, Unicode normalization,
// sentences, supershingles or LCS sequence): the comparison is of the
// whole page job, as the issue frames it.
//
//	go test -run '^$' -bench 'BenchmarkPage$' -cpu 1 -count 3 ./page/
func BenchmarkPage(b *testing.B) {
	pages, n := savedPages(b)
	b.Run("winnow", func(b *testing.B) {
		var s Signer
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pages {
				if _, err := s.Sign(p, "text/html"); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("peers", func(b *testing.B) {
		var pp peerPipeline
		o := similarity.Options{}.WithDefaults()
		pp.opts = &cdcchunkers.ChunkerOpts{MinSize: o.ChunkMin, NormalSize: o.ChunkAvg, MaxSize: o.ChunkMax}
		if err := pp.jc.Setup(pp.opts); err != nil {
			b.Fatal(err)
		}
		pp.bloom = make([]uint64, o.BloomBits/64)
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pages {
				pp.sign(p)
			}
		}
	})
}

// peerPipeline is the composed peer of BenchmarkPage; its buffers are
// reused page to page.
type peerPipeline struct {
	jc     jc.JC
	opts   *cdcchunkers.ChunkerOpts
	text   []byte
	hashes []uint64
	bloom  []uint64
	mins   [84]uint64
	sim    uint64
}

func (pp *peerPipeline) sign(page []byte) {
	// Text: the tokenizer's text tokens outside script and style.
	pp.text = pp.text[:0]
	z := html.NewTokenizer(bytes.NewReader(page))
	skip := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			pp.words()
			return
		case html.StartTagToken:
			name, _ := z.TagName()
			skip = string(name) == "script" || string(name) == "style"
		case html.EndTagToken:
			skip = false
		case html.TextToken:
			if !skip {
				pp.text = append(pp.text, z.Text()...)
				pp.text = append(pp.text, ' ')
			}
		}
	}
}

// words hashes the words of the text and computes the signatures.
func (pp *peerPipeline) words() {
	pp.hashes = pp.hashes[:0]
	var word []byte
	for t := pp.text; len(t) > 0; {
		r, size := utf8.DecodeRune(t)
		t = t[size:]
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = utf8.AppendRune(word, unicode.ToLower(r))
			continue
		}
		if len(word) > 0 {
			pp.hashes = append(pp.hashes, xxh3.Hash(word))
			word = word[:0]
		}
	}
	if len(word) > 0 {
		pp.hashes = append(pp.hashes, xxh3.Hash(word))
	}
	pp.chunks()
	pp.minhash()
	pp.simhash()
}

// chunks cuts the text with JC and sets 7 bits a chunk in the bit set.
func (pp *peerPipeline) chunks() {
	clear(pp.bloom)
	m := uint64(len(pp.bloom) * 64)
	for data := pp.text; len(data) > 0; {
		cut := max(pp.jc.Algorithm(pp.opts, data, len(data)), 1)
		h := xxh3.Hash(data[:cut])
		h1, h2 := h, h>>32|h<<32
		for i := range uint64(7) {
			bit := (h1 + i*h2) % m
			pp.bloom[bit/64] |= 1 << (bit % 64)
		}
		data = data[cut:]
	}
}

// minhash is a one-permutation min-hash: each 5-word shingle hash goes
// to bin h mod 84 and keeps the bin's minimum; empty bins take the next
// full bin's value (rotation).
func (pp *peerPipeline) minhash() {
	for i := range pp.mins {
		pp.mins[i] = math.MaxUint64
	}
	k := uint64(len(pp.mins))
	for i := 0; i+5 <= len(pp.hashes); i++ {
		h := pp.hashes[i]
		for _, x := range pp.hashes[i+1 : i+5] {
			h = bits.RotateLeft64(h, 13) ^ x
			h *= 0x9E3779B97F4A7C15
		}
		bin := bits.RotateLeft64(h, 32) % k
		pp.mins[bin] = min(pp.mins[bin], h)
	}
	for i := range pp.mins {
		for j := 1; pp.mins[i] == math.MaxUint64 && j < len(pp.mins); j++ {
			pp.mins[i] = pp.mins[(i+j)%len(pp.mins)]
		}
	}
}

// spread maps a byte to 8 byte lanes holding its bits.
var spread = func() (t [256]uint64) {
	for v := range 256 {
		for bit := range 8 {
			if v>>bit&1 != 0 {
				t[v] |= 1 << (8 * bit)
			}
		}
	}
	return t
}()

// simhash adds each 3-word shingle hash to 64 counters held 8 to a word
// (one lookup a byte of the hash), flushing the byte lanes before they
// overflow, and keeps the bits whose counter passes half the shingles.
func (pp *peerPipeline) simhash() {
	var counts [64]int
	var lanes [8]uint64
	flush := func() {
		for byteIdx, l := range lanes {
			for bit := range 8 {
				counts[8*byteIdx+bit] += int(l >> (8 * bit) & 0xff)
			}
		}
		lanes = [8]uint64{}
	}
	n := 0
	for i := 0; i+3 <= len(pp.hashes); i++ {
		h := pp.hashes[i] ^ bits.RotateLeft64(pp.hashes[i+1], 21) ^ bits.RotateLeft64(pp.hashes[i+2], 42)
		for j := range 8 {
			lanes[j] += spread[byte(h>>(8*j))]
		}
		if n++; n%255 == 0 {
			flush()
		}
	}
	flush()
	pp.sim = 0
	for bit, c := range counts {
		if 2*c > n {
			pp.sim |= 1 << bit
		}
	}
}
