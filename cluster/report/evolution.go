package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/winnow-search/winnow/canon"
)

// SizeRange is a range of cluster sizes, Min to Max inclusive; Max 0 means
// no upper bound.
type SizeRange struct {
	Min, Max int
}

// String returns "5-8", "2", or "17+".
func (r SizeRange) String() string {
	switch {
	case r.Max == 0:
		return fmt.Sprintf("%d+", r.Min)
	case r.Min == r.Max:
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

func (r SizeRange) holds(n int) bool {
	return n >= r.Min && (r.Max == 0 || n <= r.Max)
}

// DefaultRanges returns the size ranges of [Evolution]: 1, 2, 3-4, 5-8,
// 9-16, 17-32 and 33+, which suit the small clusters of search results.
func DefaultRanges() []SizeRange {
	return []SizeRange{{1, 1}, {2, 2}, {3, 4}, {5, 8}, {9, 16}, {17, 32}, {33, 0}}
}

// FetterlyRanges returns the seven size ranges of Fetterly's Figs. 4, 5
// and 7: 1, 2-10, 11-100, 101-1,000, 1,001-10,000, 10,001-100,000 and
// 100,001+.
func FetterlyRanges() []SizeRange {
	return []SizeRange{{1, 1}, {2, 10}, {11, 100}, {101, 1000}, {1001, 10000}, {10001, 100000}, {100001, 0}}
}

// EvolutionRow holds the cluster evolution coefficients of the URLs in
// clusters of one size range of the earlier snapshot.
type EvolutionRow struct {
	// Range is the range of sizes |C1(u)| of the earlier clusters.
	Range SizeRange
	// Clusters is the number of earlier clusters in the range.
	Clusters int
	// URLs is |U|, the number of URLs in those clusters, over which the
	// coefficients are averaged.
	URLs int
	// Gone is the number of those URLs absent from the later snapshot.
	Gone int
	// Phi is the mean containment coefficient Φ_1^2(u) =
	// |C2(u) ∩ C1(u)| / |C1(u)|: the fraction of u's earlier cluster still
	// clustered with u (Fetterly Fig. 4).
	Phi float64
	// Psi is the mean similarity coefficient Ψ_1^2(u) =
	// |C2(u) ∩ C1(u)| / |C2(u) ∪ C1(u)| (Fetterly Fig. 5).
	Psi float64
	// ReversePhi is the mean reverse containment coefficient Φ_2^1(u) =
	// |C1(u) ∩ C2(u)| / |C2(u)|: the fraction of u's later cluster that
	// was already clustered with u (Fetterly Fig. 7).
	ReversePhi float64
}

// Evolution compares two snapshots of the clusters, each a list of
// clusters of URLs, over [DefaultRanges]. It is [EvolutionRanges] with
// those ranges.
func Evolution(before, after [][]string) []EvolutionRow {
	return EvolutionRanges(before, after, DefaultRanges())
}

// EvolutionRanges computes Fetterly, Manasse and Najork's cluster
// evolution coefficients (§3) between snapshot 1 (before) and snapshot 2
// (after). With C_n(u) the cluster holding URL u in snapshot n, Fetterly
// define the containment coefficient of snapshot m in snapshot n and the
// similarity coefficient as
//
//	Φ_n^m(u) = |C_m(u) ∩ C_n(u)| / |C_n(u)|
//	Ψ_n^m(u) = |C_m(u) ∩ C_n(u)| / |C_m(u) ∪ C_n(u)|
//
// and plot, for U = {u : i ≤ |C_1(u)| ≤ j}, the means over u ∈ U of
// Φ_1^n(u) (Fig. 4), Ψ_1^n(u) (Fig. 5) and Φ_n^1(u) (Fig. 7). There is one
// row per range of ranges holding at least one earlier cluster, with the
// means for n = 2; the mean is over URLs, not clusters, as in the paper,
// so a large cluster weighs by its size. Ψ ≤ Φ always.
//
// Every URL of either snapshot belongs to a cluster; a URL listed in no
// cluster of a snapshot is absent from it. As in Fetterly's study, where
// pages that could not be downloaded formed one "could not download"
// cluster, the URLs of before that are absent from after form one cluster
// of after together. URLs are canonicalized with canon.URL (kept as given
// when it fails); a URL listed twice in a snapshot counts once, in its
// first cluster.
func EvolutionRanges(before, after [][]string, ranges []SizeRange) []EvolutionRow {
	c1 := clusterIDs(before)
	c2 := clusterIDs(after)
	size2 := make([]int, len(after)+1)
	for _, id := range c2.id {
		size2[id]++
	}
	gone := len(after) // the cluster id of URLs absent from after
	for _, u := range c1.order {
		if _, ok := c2.id[u]; !ok {
			size2[gone]++
		}
	}
	rows := make([]EvolutionRow, len(ranges))
	for i, r := range ranges {
		rows[i].Range = r
	}
	for _, members := range c1.members {
		n := len(members)
		ri := -1
		for i, r := range ranges {
			if r.holds(n) {
				ri = i
				break
			}
		}
		if ri < 0 || n == 0 {
			continue
		}
		row := &rows[ri]
		row.Clusters++
		// Count the members of this earlier cluster per later cluster.
		later := make([]int, n)
		inter := map[int]int{}
		for k, u := range members {
			id, ok := c2.id[u]
			if !ok {
				id = gone
				row.Gone++
			}
			later[k] = id
			inter[id]++
		}
		for k := range members {
			in, s2 := inter[later[k]], size2[later[k]]
			row.URLs++
			row.Phi += float64(in) / float64(n)
			row.Psi += float64(in) / float64(n+s2-in)
			row.ReversePhi += float64(in) / float64(s2)
		}
	}
	out := rows[:0]
	for _, r := range rows {
		if r.Clusters == 0 {
			continue
		}
		r.Phi /= float64(r.URLs)
		r.Psi /= float64(r.URLs)
		r.ReversePhi /= float64(r.URLs)
		out = append(out, r)
	}
	return out
}

// snapshot is one clustering: the cluster number of each URL and the
// members of each cluster, each URL once.
type snapshot struct {
	id      map[string]int
	members [][]string
	order   []string
}

func clusterIDs(clusters [][]string) snapshot {
	s := snapshot{id: map[string]int{}, members: make([][]string, len(clusters))}
	for ci, c := range clusters {
		for _, raw := range c {
			u := raw
			if cu, err := canon.URL(raw); err == nil {
				u = cu
			}
			if _, dup := s.id[u]; dup {
				continue
			}
			s.id[u] = ci
			s.members[ci] = append(s.members[ci], u)
			s.order = append(s.order, u)
		}
	}
	return s
}

// WriteEvolution writes rows as an aligned text table.
func WriteEvolution(w io.Writer, rows []EvolutionRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sizes\tclusters\turls\tgone\tphi\tpsi\treverse phi\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t\n", r.Range, r.Clusters, r.URLs, r.Gone, r.Phi, r.Psi, r.ReversePhi)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
