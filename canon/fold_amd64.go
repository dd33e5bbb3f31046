//go:build !purego

package canon

import "golang.org/x/sys/cpu"

// hasFoldAVX2 reports that the CPU runs foldPlainAVX2 (AVX2 and BMI1's
// TZCNT).
var hasFoldAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// foldPlainAVX2 is foldASCII's step over plain text ([plainFold]'s bytes)
// after a kept byte, 32 bytes at a time: from the n >= 32 bytes at src it
// folds the longest run of plain bytes, stopping at a byte that is
// non-ASCII or a separator other than a single space, or where fewer than
// 32 bytes are left. It writes the folded run at dst (a space first if
// space says one is due) and returns the bytes read, the bytes written
// (without a space that ends the run) and whether a space is due after
// them. It writes up to n+1 bytes at dst, beyond those it counts.
//
//go:noescape
func foldPlainAVX2(src *byte, n int, dst *byte, space bool) (read, written int, due bool)

// asciiSpanAVX2 returns the length of the ASCII prefix of the n >= 32
// bytes at p, read 32 bytes a step: it stops at the first non-ASCII byte
// or where fewer than 32 bytes are left.
//
//go:noescape
func asciiSpanAVX2(p *byte, n int) int
