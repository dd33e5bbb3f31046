//go:build !amd64 || purego

package canon

// hasFoldAVX2 is false: foldASCII folds eight bytes at a time in Go.
const hasFoldAVX2 = false

func foldASCIIAVX2(src *byte, n int, dst *byte, space bool) (read, written int, due bool) {
	panic("canon: foldASCIIAVX2 without AVX2")
}
