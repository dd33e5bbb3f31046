//go:build !purego

package canon

import "golang.org/x/sys/cpu"

// hasFoldAVX2 reports that the CPU runs foldASCIIAVX2
// (AVX2, and BMI1's TZCNT and BMI2's SHLX and SHRX).
var hasFoldAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// foldASCIIAVX2 is foldASCII's loop after a kept byte, 32 bytes a step:
// it folds the n >= 32 bytes at src up to the first non-ASCII byte or
// to where fewer than 32 bytes are left, writing at dst (a space first
// if space says one is due), and returns the bytes read, the bytes
// written (without a space that ends them) and whether a space is due
// after them. Runs of plain bytes ([plainFold]'s) are copied with their
// letters lower-cased, 32 at a time; the other ASCII bytes between
// them are skipped, leaving a space due. It writes up to n+1 bytes at
// dst, beyond those it counts.
//
//go:noescape
func foldASCIIAVX2(src *byte, n int, dst *byte, space bool) (read, written int, due bool)
