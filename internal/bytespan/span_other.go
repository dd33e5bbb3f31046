//go:build !amd64 || purego

package bytespan

// hasAVX2 is false: the spans are read eight bytes at a time.
const hasAVX2 = false

func asciiAVX2(p *byte, n int) int     { panic("bytespan: asciiAVX2 without AVX2") }
func jsonPlainAVX2(p *byte, n int) int { panic("bytespan: jsonPlainAVX2 without AVX2") }
