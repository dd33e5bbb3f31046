//go:build !purego

package bytespan

import "golang.org/x/sys/cpu"

// hasAVX2 reports that the CPU runs the kernels of span_amd64.s (AVX2
// and BMI1's TZCNT). A variable, so that tests can take the Go path.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// asciiAVX2 returns the length of the ASCII prefix of the n >= 32 bytes
// at p, read 32 bytes a step: it stops at the first byte of 0x80 or more
// or where fewer than 32 bytes are left.
//
//go:noescape
func asciiAVX2(p *byte, n int) int

// jsonPlainAVX2 is asciiAVX2 stopping also at a quote, a backslash or a
// control byte.
//
//go:noescape
func jsonPlainAVX2(p *byte, n int) int
