package similarity

import (
	"errors"
	"strings"
	"testing"
)

func TestHeadingHash(t *testing.T) {
	same := [][2]string{
		{"Using ARM NEON instructions in big endian mode", "Using ARM NEON instructions in big-endian mode"},
		{"  Syntax of GFX10 RDNA1 Instructions ¶", "syntax of gfx10 rdna1 instructions"},
		{"Über   die Straße", "über die straße"},
		{"東京 タワー", "東京・タワー"},
	}
	for _, p := range same {
		if a, b := HeadingHash(p[0]), HeadingHash(p[1]); a != b || a == 0 {
			t.Errorf("HeadingHash(%q) = %x, HeadingHash(%q) = %x; want equal and not 0", p[0], a, p[1], b)
		}
	}
	differ := [][2]string{
		{"Syntax of GFX10 RDNA1 Instructions", "Syntax of GFX10 RDNA2 Instructions"},
		{"Syntax of GFX940 Instructions", "Syntax of GFX942 Instructions"},
		{"vdst", "vdata"},
		{"Chapter 3", "Chapter 4"},
		{"big endian", "bigendian"},
	}
	for _, p := range differ {
		if a, b := HeadingHash(p[0]), HeadingHash(p[1]); a == b {
			t.Errorf("HeadingHash(%q) = HeadingHash(%q) = %x; want them to differ", p[0], p[1], a)
		}
	}
	for _, h := range []string{"", "   ", "¶", "— · —"} {
		if v := HeadingHash(h); v != 0 {
			t.Errorf("HeadingHash(%q) = %x, want 0 (no words)", h, v)
		}
	}
}

// TestHeadingsDiffer checks the score and the feature: only two present,
// different headings count; a side without one is no evidence.
func TestHeadingsDiffer(t *testing.T) {
	in := sigCorpus(t)
	sign := func(h string) Signature {
		in := in
		in.Heading = h
		return Sign(in, Options{})
	}
	rdna1, rdna2, none := sign("Syntax of GFX10 RDNA1 Instructions"), sign("Syntax of GFX10 RDNA2 Instructions"), sign("")
	rdna1b := sign("syntax of GFX10 RDNA1 instructions ¶")
	for _, tt := range []struct {
		name string
		a, b *Signature
		want bool
	}{
		{"different headings", &rdna1, &rdna2, true},
		{"same heading, other case and a pilcrow", &rdna1, &rdna1b, false},
		{"one side without a heading", &rdna1, &none, false},
		{"neither has one", &none, &none, false},
	} {
		s := Compare(tt.a, tt.b, CompareOptions{LCS: true})
		if s.HeadingsDiffer != tt.want {
			t.Errorf("%s: HeadingsDiffer = %v, want %v", tt.name, s.HeadingsDiffer, tt.want)
		}
		want := 0.0
		if tt.want {
			want = 1
		}
		if v := FeatureHeadingsDiffer.Value(&s); v != want {
			t.Errorf("%s: feature value %v, want %v", tt.name, v, want)
		}
		if s.LCS != 1 {
			t.Errorf("%s: LCS %v; the heading must not change the text's scores", tt.name, s.LCS)
		}
	}
}

// TestHeadingEncoding checks that the heading survives the encoding, that
// version 3 data (no heading) still decodes, without one, and that a
// heading flag a version 3 writer could not have set is corrupt.
func TestHeadingEncoding(t *testing.T) {
	in := sigCorpus(t)
	in.Heading = "Syntax of GFX10 RDNA2 Instructions"
	s := Sign(in, Options{})
	if s.Heading == 0 {
		t.Fatal("Sign left Heading 0")
	}
	data, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Signature
	if err := got.UnmarshalBinary(data); err != nil || !sigEqual(&got, &s) {
		t.Fatalf("round trip: err %v, heading %x, want %x", err, got.Heading, s.Heading)
	}

	// A version 3 writer wrote the same bytes without the flag and the
	// 8 heading bytes after the simhash.
	in.Heading = ""
	v3 := Sign(in, Options{})
	old, err := v3.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	old[0] = 3
	if err := got.UnmarshalBinary(old); err != nil {
		t.Fatalf("UnmarshalBinary(version 3) = %v", err)
	}
	if got.Heading != 0 || !sigEqual(&got, &v3) {
		t.Errorf("version 3 decoded with heading %x, want the signature without one", got.Heading)
	}

	bad := append([]byte(nil), data...)
	bad[0] = 3
	if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 3 with a heading flag: %v, want ErrCorrupt", err)
	}
	// The heading is written only when not 0.
	zero := append([]byte(nil), data...)
	i := strings.Index(string(zero), string(le64(s.Heading)))
	if i < 0 {
		t.Fatal("heading bytes not found in the encoding")
	}
	copy(zero[i:], make([]byte, 8))
	if err := got.UnmarshalBinary(zero); !errors.Is(err, ErrCorrupt) {
		t.Errorf("heading flag with a zero heading: %v, want ErrCorrupt", err)
	}
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}
