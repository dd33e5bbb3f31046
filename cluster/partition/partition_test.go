package partition

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// lengthSample returns n length vectors of dims dimensions whose total
// lengths follow a log-normal law around 600 words (web page lengths are
// skewed, Zhu Fig. 1), each word falling in a dimension uniformly.
func lengthSample(r *rand.Rand, n, dims int) [][]uint32 {
	out := make([][]uint32, n)
	for i := range out {
		total := int(math.Exp(6.4 + 1.0*r.NormFloat64()))
		out[i] = split(r, total, dims)
	}
	return out
}

// split spreads total words over dims dimensions at random.
func split(r *rand.Rand, total, dims int) []uint32 {
	v := make([]uint32, dims)
	if dims == 1 {
		v[0] = uint32(total)
		return v
	}
	for range total {
		v[r.IntN(dims)]++
	}
	return v
}

func TestFactors(t *testing.T) {
	tests := []struct {
		parts, dims int
		want        []int
	}{
		{64, 1, []int{64}},
		{64, 2, []int{8, 8}},
		{64, 3, []int{4, 4, 4}},
		{32, 3, []int{4, 4, 2}},
		{16, 3, []int{4, 2, 2}},
		{8, 3, []int{2, 2, 2}},
		{27, 3, []int{3, 3, 3}},
		{12, 2, []int{4, 3}},
		{7, 1, []int{7}},
		{7, 2, nil},
		{4, 3, nil},
		{2, 2, nil},
		{1, 1, nil},
	}
	for _, tt := range tests {
		if got := Factors(tt.parts, tt.dims); !slices.Equal(got, tt.want) {
			t.Errorf("Factors(%d, %d) = %v, want %v", tt.parts, tt.dims, got, tt.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	sample := [][]uint32{{1, 2, 3}}
	tests := []struct {
		name        string
		dims, parts int
		sample      [][]uint32
		want        error
	}{
		{"parts not split", 3, 4, sample, ErrParts},
		{"prime over 2-D", 2, 7, sample, ErrParts},
		{"one part", 1, 1, sample, ErrParts},
		{"too many parts", 1, MaxParts + 1, sample, ErrParts},
		{"empty sample", 3, 8, nil, ErrSample},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.dims, tt.parts, tt.sample); !errors.Is(err, tt.want) {
				t.Errorf("New(%d, %d) error = %v, want %v", tt.dims, tt.parts, err, tt.want)
			}
		})
	}
	for _, dims := range []int{0, MaxDims + 1} {
		if _, err := New(dims, 8, sample); err == nil {
			t.Errorf("New(%d, 8) error = nil, want an error", dims)
		}
	}
}

func TestFold(t *testing.T) {
	tests := []struct {
		in   []uint32
		dims int
		want []uint32
	}{
		{[]uint32{1, 2, 3}, 3, []uint32{1, 2, 3}},
		{[]uint32{1, 2, 3}, 2, []uint32{3, 3}},
		{[]uint32{1, 2, 3}, 1, []uint32{6}},
		{[]uint32{1, 2, 3, 4}, 2, []uint32{3, 7}},
		{[]uint32{1, 2}, 3, []uint32{1, 2, 0}},
		{[]uint32{math.MaxUint32, 5}, 1, []uint32{math.MaxUint32}},
	}
	for _, tt := range tests {
		if got := Fold(tt.in, tt.dims); !slices.Equal(got, tt.want) {
			t.Errorf("Fold(%v, %d) = %v, want %v", tt.in, tt.dims, got, tt.want)
		}
	}
}

func TestPartitionBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{1, 2, 3} {
		sample := lengthSample(r, 20000, dims)
		p, err := New(dims, 64, sample)
		if err != nil {
			t.Fatal(err)
		}
		// Balance on fresh pages of the same law, not the sample itself.
		counts := make([]int, p.Parts())
		for _, v := range lengthSample(r, 20000, dims) {
			counts[p.Partition(v)]++
		}
		// 312 pages a partition: the binomial spread (3 sigma is 1.17) plus
		// the error of quantiles estimated from 20,000 pages.
		if got := Imbalance(counts); got > 1.35 {
			t.Errorf("%d-D, 64 partitions: Imbalance = %.3f, want <= 1.35", dims, got)
		}
	}
}

func TestPartitionRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p, err := New(3, 64, lengthSample(r, 500, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]uint32{{0, 0, 0}, {math.MaxUint32, math.MaxUint32, math.MaxUint32}, {0, math.MaxUint32, 7}, {5}, {1, 2, 3, 4, 5, 6}} {
		if got := p.Partition(v); got < 0 || got >= 64 {
			t.Errorf("Partition(%v) = %d, want in [0, 64)", v, got)
		}
		if c := p.Candidates(v, 0.9); !slices.Contains(c, p.Partition(v)) {
			t.Errorf("Candidates(%v, 0.9) = %v, want it to hold Partition = %d", v, c, p.Partition(v))
		}
	}
}

// weighted returns whether B meets the bound of Candidates for A at
// tau = num/den exactly, in integers: Σ (den·u_i + num·o_i) ≤ (den−num)·|A|.
func weighted(a, b []uint32, num, den int64) bool {
	var lhs, total int64
	for i := range a {
		ai, bi := int64(a[i]), int64(b[i])
		total += ai
		if bi < ai {
			lhs += den * (ai - bi)
		} else {
			lhs += num * (bi - ai)
		}
	}
	return lhs <= (den-num)*total
}

// TestCandidatesExact checks Candidates against brute force: the
// partitions of every integer vector within the bound, and no others.
func TestCandidatesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []struct {
		dims, parts int
		num, den    int64
	}{
		{1, 16, 4, 5}, {2, 16, 4, 5}, {2, 36, 9, 10}, {3, 27, 4, 5}, {3, 64, 9, 10}, {3, 8, 1, 2},
	} {
		sample := make([][]uint32, 400)
		for i := range sample {
			sample[i] = split(r, 10+r.IntN(50), tt.dims)
		}
		p, err := New(tt.dims, tt.parts, sample)
		if err != nil {
			t.Fatal(err)
		}
		tau := float64(tt.num) / float64(tt.den)
		for range 30 {
			a := split(r, 5+r.IntN(60), tt.dims)
			var total uint32
			for _, v := range a {
				total += v
			}
			// Each B_i within the bound is at most A_i + (1−tau)|A|/tau.
			reach := uint32(float64(total)*(1-tau)/tau) + 2
			want := map[int]bool{}
			b := make([]uint32, tt.dims)
			var rec func(k int)
			rec = func(k int) {
				if k == tt.dims {
					if weighted(a, b, tt.num, tt.den) {
						want[p.Partition(b)] = true
					}
					return
				}
				for v := uint32(0); v <= a[k]+reach; v++ {
					b[k] = v
					rec(k + 1)
				}
			}
			rec(0)
			got := p.Candidates(a, tau)
			wantList := make([]int, 0, len(want))
			for q := range want {
				wantList = append(wantList, q)
			}
			slices.Sort(wantList)
			if !slices.Equal(got, wantList) {
				t.Errorf("%d-D %d parts: Candidates(%v, %g) = %v, want %v", tt.dims, tt.parts, a, tau, got, wantList)
			}
		}
	}
}

// TestCandidatesKeepNearDuplicates is the property test: for random word
// multisets A and edited copies B whose multiset word Jaccard is at least
// tau, and for any B in Zhu's box (A_i·tau, A_i/tau), B's partition is a
// candidate of A.
func TestCandidatesKeepNearDuplicates(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const vocab = 300
	for _, dims := range []int{1, 2, 3} {
		p, err := New(dims, 64, lengthSample(r, 5000, dims))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for range 3000 {
			tau := []float64{0.5, 0.7, 0.8, 0.9, 0.95}[r.IntN(5)]
			// A: a Zipf-ish bag of words; word w is in dimension w % dims.
			n := int(math.Exp(6 + 0.8*r.NormFloat64()))
			a := make([]int, vocab)
			for range n {
				a[int(float64(vocab)*math.Pow(r.Float64(), 2.5))]++
			}
			b := slices.Clone(a)
			edits := r.IntN(1 + n*int(100*(1-tau))/100)
			for range edits {
				w := r.IntN(vocab)
				if r.IntN(2) == 0 && b[w] > 0 {
					b[w]--
				} else {
					b[w]++
				}
			}
			var mn, mx int
			av, bv := make([]uint32, dims), make([]uint32, dims)
			for w := range vocab {
				mn += min(a[w], b[w])
				mx += max(a[w], b[w])
				av[w%dims] += uint32(a[w])
				bv[w%dims] += uint32(b[w])
			}
			if mx == 0 || float64(mn)/float64(mx) < tau {
				continue
			}
			checked++
			if c := p.Candidates(av, tau); !slices.Contains(c, p.Partition(bv)) {
				t.Errorf("%d-D: J = %.3f >= %g but Partition(%v) = %d not in Candidates(%v) = %v", dims, float64(mn)/float64(mx), tau, bv, p.Partition(bv), av, c)
			}
			// Zhu's box with rho = 1.
			z := make([]uint32, dims)
			for i, v := range av {
				lo, hi := math.Ceil(float64(v)*tau), math.Floor(float64(v)/tau)
				z[i] = uint32(lo + math.Floor(r.Float64()*(hi-lo+1)))
			}
			if c := p.Candidates(av, tau); !slices.Contains(c, p.Partition(z)) {
				t.Errorf("%d-D: Zhu's box: Partition(%v) = %d not in Candidates(%v, %g) = %v", dims, z, p.Partition(z), av, tau, c)
			}
		}
		if checked < 1000 {
			t.Errorf("%d-D: only %d pairs above tau checked, want >= 1000", dims, checked)
		}
	}
}

// TestCandidatesPrune checks that the bound prunes: a mid-length page at
// tau = 0.9 has far fewer than 64 candidates, and fewer than at 0.5.
func TestCandidatesPrune(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	sample := lengthSample(r, 20000, 3)
	p, err := New(3, 64, sample)
	if err != nil {
		t.Fatal(err)
	}
	var n90, n50 int
	for _, v := range sample[:1000] {
		n90 += len(p.Candidates(v, 0.9))
		n50 += len(p.Candidates(v, 0.5))
	}
	if n90 >= 1000*32 || n90 >= n50 {
		t.Errorf("mean candidates = %.1f at 0.9, %.1f at 0.5 of 64, want < 32 and fewer at 0.9", float64(n90)/1000, float64(n50)/1000)
	}
	t.Logf("mean candidates of 64 in 3-D: %.1f at tau 0.9, %.1f at tau 0.5", float64(n90)/1000, float64(n50)/1000)
	if got := p.Candidates(sample[0], 0); len(got) > 64 || len(got) < 32 {
		t.Errorf("Candidates(%v, 0) has %d partitions, want nearly all 64", sample[0], len(got))
	}
}

func TestImbalance(t *testing.T) {
	tests := []struct {
		counts []int
		want   float64
	}{
		{nil, 0},
		{[]int{0, 0}, 0},
		{[]int{5, 5, 5, 5}, 1},
		{[]int{10, 0, 0, 0}, 4},
		{[]int{3, 1}, 1.5},
	}
	for _, tt := range tests {
		if got := Imbalance(tt.counts); got != tt.want {
			t.Errorf("Imbalance(%v) = %g, want %g", tt.counts, got, tt.want)
		}
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, dims := range []int{1, 2, 3} {
		sample := lengthSample(r, 2000, dims)
		p, err := New(dims, 64, sample)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q Partitioner
		if err := q.UnmarshalBinary(b); err != nil {
			t.Fatalf("%d-D: UnmarshalBinary: %v", dims, err)
		}
		if q.Dims() != dims || q.Parts() != 64 || !slices.Equal(q.Factors(), p.Factors()) {
			t.Errorf("%d-D: decoded dims %d parts %d factors %v, want %d 64 %v", dims, q.Dims(), q.Parts(), q.Factors(), dims, p.Factors())
		}
		for _, v := range sample[:200] {
			if q.Partition(v) != p.Partition(v) || !slices.Equal(q.Candidates(v, 0.8), p.Candidates(v, 0.8)) {
				t.Fatalf("%d-D: decoded Partitioner differs on %v", dims, v)
			}
		}
		// Every strict prefix and a trailing byte are corrupt.
		for i := range b {
			if err := q.UnmarshalBinary(b[:i]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d-D: UnmarshalBinary(prefix %d) error = %v, want ErrCorrupt", dims, i, err)
			}
		}
		if err := q.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%d-D: UnmarshalBinary(trailing byte) error = %v, want ErrCorrupt", dims, err)
		}
	}
	if _, err := new(Partitioner).MarshalBinary(); err == nil {
		t.Error("zero Partitioner MarshalBinary error = nil, want an error")
	}
	for _, bad := range [][]byte{{2, 1, 4}, {1, 0}, {1, 1, 1}, {1, 1, 3, 9, 2}} {
		if err := new(Partitioner).UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("UnmarshalBinary(%v) error = %v, want ErrCorrupt", bad, err)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	p, err := New(3, 8, [][]uint32{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {2, 2, 2}})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := p.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var q Partitioner
		if q.UnmarshalBinary(data) != nil {
			return
		}
		v := []uint32{3, 4, 5}
		if got := q.Partition(v); got < 0 || got >= q.Parts() {
			t.Fatalf("Partition(%v) = %d, want in [0, %d)", v, got, q.Parts())
		}
		if !slices.Contains(q.Candidates(v, 0.9), q.Partition(v)) {
			t.Fatalf("Candidates(%v) lacks its own partition", v)
		}
	})
}

func BenchmarkPartition(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	sample := lengthSample(r, 10000, 3)
	p, err := New(3, 64, sample)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Partition(sample[i%len(sample)])
		i++
	}
}

func BenchmarkCandidates(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	sample := lengthSample(r, 10000, 3)
	p, err := New(3, 64, sample)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Candidates(sample[i%len(sample)], 0.9)
		i++
	}
}
