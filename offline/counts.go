package offline

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FormatCounts formats a tally as "kind n, kind n", largest count first
// (ties by kind), as winnow dedup and winnow-beam print what they skipped
// or loaded; "" for an empty tally.
func FormatCounts[N int | int64](m map[string]N) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
