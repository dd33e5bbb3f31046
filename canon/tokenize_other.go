//go:build !amd64 || purego

package canon

// hasTokenizeAVX2 is false: asciiWords reads eight bytes at a time.
const hasTokenizeAVX2 = false

// edgeScratch is empty: only blockWords writes edges.
type edgeScratch struct{}

// blockWords is never called (hasTokenizeAVX2 is false); it reads
// nothing.
func blockWords(text string, i int, toks []string, start int, _ *edgeScratch) (int, []string, int, bool) {
	return i, toks, start, false
}
