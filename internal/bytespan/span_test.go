package bytespan

import "testing"

// TestSpans: ASCII and JSONPlain give the byte loop's answer with every
// kind of byte at every position of three 32-byte rounds and the tail
// after them, at two alignments, whatever the length; with AVX2 and
// without it where the CPU has it.
func TestSpans(t *testing.T) {
	want := func(b []byte, stop func(byte) bool) int {
		for i, c := range b {
			if stop(c) {
				return i
			}
		}
		return len(b)
	}
	nonASCII := func(c byte) bool { return c >= 0x80 }
	paths := []bool{false}
	if hasAVX2 {
		paths = append(paths, true)
	}
	defer func(h bool) { setAVX2(h) }(hasAVX2)
	buf := make([]byte, 1+110)
	for _, avx := range paths {
		setAVX2(avx)
		for _, fill := range []byte{'a', ' ', 0x7f, '/'} {
			for _, c := range []byte{'"', '\\', 0, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff, 'z'} {
				for align := range 2 {
					for pos := range 110 {
						b := buf[align : align+110]
						for k := range b {
							b[k] = fill
						}
						b[pos] = c
						for _, n := range []int{0, 7, 31, 32, 63, 64, 96, 100, 110} {
							if got, w := ASCII(b[:n]), want(b[:n], nonASCII); got != w {
								t.Fatalf("avx2 %v: ASCII(%#x at %d in %q, %d bytes) = %d, want %d", avx, c, pos, fill, n, got, w)
							}
							if got, w := JSONPlain(b[:n]), want(b[:n], special); got != w {
								t.Fatalf("avx2 %v: JSONPlain(%#x at %d in %q, %d bytes) = %d, want %d", avx, c, pos, fill, n, got, w)
							}
						}
					}
				}
			}
		}
	}
}
