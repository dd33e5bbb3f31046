package similarity

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// sigEqual reports whether a and b hold the same values.
func sigEqual(a, b *Signature) bool {
	if (a.Bloom == nil) != (b.Bloom == nil) || (a.Bloom != nil && !a.Bloom.Equal(b.Bloom)) {
		return false
	}
	x, y := *a, *b
	x.Bloom, y.Bloom = nil, nil
	return reflect.DeepEqual(x, y)
}

func TestEncodingRoundTrip(t *testing.T) {
	var sizes []int
	for _, tt := range sigTexts(t) {
		for _, o := range []Options{{MaxSeq: -1}, {}} {
			in := sigInput(tt.text)
			// Web-page sized pieces as well as the whole text.
			for _, n := range []int{2 << 10, 8 << 10, len(in.Text)} {
				piece := sigInput(string(cutUTF8(in.Text, n)))
				s := Sign(piece, o)
				b, err := s.MarshalBinary()
				if err != nil {
					t.Fatalf("%s: MarshalBinary: %v", tt.name, err)
				}
				var got Signature
				if err := got.UnmarshalBinary(b); err != nil {
					t.Fatalf("%s: UnmarshalBinary: %v", tt.name, err)
				}
				if !sigEqual(&s, &got) {
					t.Errorf("%s, %d bytes: round trip differs:\n got %+v\nwant %+v", tt.name, n, got, s)
				}
				if o.MaxSeq < 0 {
					sizes = append(sizes, len(b))
					// A typical page (up to 8 KiB of canonical text) fits in
					// 512 bytes; longer texts grow with their Bloom filter
					// up to its dense 256 bytes.
					if len(piece.Text) <= 8<<10 && len(b) >= 512 || len(b) >= 600 {
						t.Errorf("%s, %d bytes of text: encoding %d bytes without Seq, want < 512 (< 600 for long texts)", tt.name, len(piece.Text), len(b))
					}
				}
				ab, err := s.AppendBinary([]byte("prefix"))
				if err != nil || string(ab[:6]) != "prefix" || string(ab[6:]) != string(b) {
					t.Errorf("%s: AppendBinary differs from MarshalBinary (err %v)", tt.name, err)
				}
			}
		}
	}
	slices.Sort(sizes)
	t.Logf("encoded sizes without Seq (bytes): min %d, median %d, max %d, all %v", sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1], sizes)
}

func TestEncodingEmpty(t *testing.T) {
	var zero Signature
	b, err := zero.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Signature
	if err := got.UnmarshalBinary(b); err != nil || !sigEqual(&zero, &got) {
		t.Errorf("zero round trip = %+v, %v, want zero, nil", got, err)
	}
	if !got.Empty() {
		t.Errorf("decoded zero: Empty() = false, want true")
	}
}

func TestEncodingErrors(t *testing.T) {
	in := sigCorpus(t)
	in.Links = []string{"index.html", "../a.html#x"}
	s := Sign(in, Options{})
	good, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"nil", nil, ErrCorrupt},
		{"version 0", append([]byte{0}, good[1:]...), ErrVersion},
		{"version 1 (MD5 fingerprints)", append([]byte{1}, good[1:]...), ErrVersion},
		{"version 7", append([]byte{7}, good[1:]...), ErrVersion},
		{"version 5 with links", append([]byte{5}, good[1:]...), ErrCorrupt},
		{"version 4 with numbers", append([]byte{4, good[1] &^ flagLinks}, good[2:len(good)-(1+4*len(s.Links))]...), ErrCorrupt},
		{"unknown flag", append([]byte{SignatureVersion, 0x80}, good[2:]...), ErrCorrupt},
		{"trailing byte", append(slices.Clone(good), 0), ErrCorrupt},
		{"dense without bloom", []byte{SignatureVersion, flagBloomDense, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ErrCorrupt},
		{"huge count", []byte{SignatureVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}, ErrCorrupt},
	}
	for n := 1; n < len(good); n++ {
		tests = append(tests, struct {
			name string
			data []byte
			want error
		}{"truncated", good[:n], ErrCorrupt})
	}
	for _, tt := range tests {
		var got Signature
		err := got.UnmarshalBinary(tt.data)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s (%d bytes): UnmarshalBinary = %v, want %v", tt.name, len(tt.data), err, tt.want)
		}
		if err != nil && !sigEqual(&got, &Signature{}) {
			t.Errorf("%s: UnmarshalBinary changed s on error", tt.name)
		}
	}
}

func TestEncodingBloomForms(t *testing.T) {
	// A full filter encodes dense, a sparse one sparse; both round trip.
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 10, 100, 400, 2000} {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = r.Uint64()
		}
		s := Signature{Tokens: 10, Bloom: sigFilter(keys), Chunks: n}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got Signature
		if err := got.UnmarshalBinary(b); err != nil || !sigEqual(&s, &got) {
			t.Errorf("%d keys: round trip = %v", n, err)
		}
		dense := b[1]&flagBloomDense != 0
		if wantDense := n >= 400; dense != wantDense {
			t.Errorf("%d keys: dense = %v, want %v (%d bytes)", n, dense, wantDense, len(b))
		}
	}
}

func FuzzSignatureDecode(f *testing.F) {
	for _, tt := range sigTexts(f)[:3] {
		for _, o := range []Options{{}, {MaxSeq: -1}, {MaxSeq: 20}} {
			s := Sign(sigInput(tt.text[:min(len(tt.text), 3000)]), o)
			b, _ := s.MarshalBinary()
			f.Add(b)
		}
	}
	var zero Signature
	b, _ := zero.MarshalBinary()
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{SignatureVersion, flagBloom, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Signature
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of decoded: %v", err)
		}
		var again Signature
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatalf("UnmarshalBinary of re-encoded: %v", err)
		}
		if !sigEqual(&s, &again) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", again, s)
		}
	})
}

func BenchmarkMarshal(b *testing.B) {
	s := Sign(sigInput(sigTexts(b)[0].text), Options{MaxSeq: -1})
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = s.AppendBinary(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkUnmarshal(b *testing.B) {
	s := Sign(sigInput(sigTexts(b)[0].text), Options{MaxSeq: -1})
	data, _ := s.MarshalBinary()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var t Signature
		if err := t.UnmarshalBinary(data); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEncodingLimits(t *testing.T) {
	tests := []struct {
		name string
		s    Signature
	}{
		{"min-hashes", Signature{MinHash: make([]uint16, MaxMinHashes+1)}},
		{"fingerprints", Signature{Fingerprints: make([]uint32, MaxFingerprints+1)}},
		{"lengths", Signature{Lengths: make([]uint32, MaxLengthDims+1)}},
		{"negative tokens", Signature{Tokens: -1}},
	}
	for _, tt := range tests {
		b, err := tt.s.AppendBinary([]byte("x"))
		if err == nil || string(b) != "x" {
			t.Errorf("%s: AppendBinary = %q, %v, want unchanged and an error", tt.name, b, err)
		}
	}
}

// TestUnmarshalOldVersions reads signatures of versions 2 to 5 (the same
// layout without the links section, and before 5 without the numbers
// section) as everything but what changed since: version 5 without its
// links, version 4 without its numbers, version 3 also without its word
// sequence (numbers hashed as words), version 2 also without its Bloom
// filter (CDC chunks cut by the old rule), so a store written before
// any change stays usable and no score mixes two rules.
func TestUnmarshalOldVersions(t *testing.T) {
	in := sigCorpus(t)
	in.Links = []string{"index.html", "../a.html#x"}
	s := Sign(in, Options{})
	sig := &s
	if sig.Bloom == nil || sig.Chunks == 0 || len(sig.Seq) == 0 || len(sig.Numbers) == 0 || len(sig.Links) == 0 {
		t.Fatal("test signature has no Bloom filter, no sequence, no numbers or no links")
	}
	for _, version := range []byte{2, 3, 4, 5} {
		old := *sig
		old.Links = nil // not in the layout of versions before 6
		if version < 5 {
			old.Numbers = nil // not in the layout of versions before 5
		}
		data, err := old.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		data[0] = version
		var got Signature
		if err := got.UnmarshalBinary(data); err != nil {
			t.Fatalf("UnmarshalBinary(version %d) = %v", version, err)
		}
		want := old
		if version == 5 {
			if !sigEqual(&got, &want) {
				t.Errorf("version 5 decoded as %+v, want %+v", got, want)
			}
			if _, known := LinksDiffer(got.Links, sig.Links); known {
				t.Errorf("version 5 against a new signature: links known, want unknown")
			}
			continue
		}
		if version == 4 {
			if !sigEqual(&got, &want) {
				t.Errorf("version 4 decoded as %+v, want %+v", got, want)
			}
			if sc := Compare(&got, sig, CompareOptions{Numbers: true}); sc.HasNumbers {
				t.Errorf("version 4 against a new signature: HasNumbers, want numbers unknown")
			}
			continue
		}
		want.Seq = nil
		if version == 2 {
			want.Bloom, want.Chunks = nil, 0
		}
		if !sigEqual(&got, &want) {
			t.Errorf("version %d decoded as %+v, want %+v", version, got, want)
		}
		s := Compare(&got, sig, CompareOptions{LCS: true})
		if !math.IsNaN(s.LCS) || s.Jaccard != 1 {
			t.Errorf("version %d against new signature of one text: LCS %v, Jaccard %v; want no LCS, Jaccard 1", version, s.LCS, s.Jaccard)
		}
		if hasBloom := s.BloomAB != 0 || s.BloomBA != 0; hasBloom != (version == 3) {
			t.Errorf("version %d against new signature: Bloom %v/%v, want a Bloom score only from version 3", version, s.BloomAB, s.BloomBA)
		}
	}
}

func TestEncodedWithSeq(t *testing.T) {
	s := Sign(sigCorpus(t), Options{})
	with, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	s.Seq = nil
	without, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	old := slices.Clone(with)
	old[0] = signatureVersionOldSeq // read without its sequence
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{{"with", with, true}, {"without", without, false}, {"version 3", old, false}, {"empty", nil, false}, {"one byte", with[:1], false}} {
		if got := EncodedWithSeq(c.data); got != c.want {
			t.Errorf("EncodedWithSeq(%s) = %v, want %v", c.name, got, c.want)
		}
		var dec Signature
		if err := dec.UnmarshalBinary(c.data); err == nil && (len(dec.Seq) > 0) != c.want {
			t.Errorf("%s: decoded sequence of %d tokens, EncodedWithSeq %v", c.name, len(dec.Seq), c.want)
		}
	}
}
