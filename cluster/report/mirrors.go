package report

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/winnow-search/winnow/canon"
)

// DefaultMinShared is the fewest shared clusters that make two hosts a
// mirror candidate in [Mirrors]: Fetterly's 10.
const DefaultMinShared = 10

// SuffixArcs is the number of trailing path segments compared to confirm a
// mirror: Fetterly §2 hashes the last four slash-separated suffixes.
const SuffixArcs = 4

// MirrorKind says what a host pair of [Mirrors] is.
type MirrorKind int

const (
	// Unconfirmed pairs share clusters, but their URLs mostly do not end
	// in the same paths: coincidental duplicates such as error pages or
	// boilerplate (Fetterly §4: the "Untitled Document" clusters).
	Unconfirmed MirrorKind = iota
	// Mirror pairs are different sites serving the same tree: most shared
	// clusters hold the same path suffix on both hosts.
	Mirror
	// Alias pairs are two names of one site (www.x.com and x.com): their
	// canon.HostKey is the same, so they are not mirrors.
	Alias
)

// String returns "unconfirmed", "mirror" or "alias".
func (k MirrorKind) String() string {
	switch k {
	case Mirror:
		return "mirror"
	case Alias:
		return "alias"
	case Unconfirmed:
		return "unconfirmed"
	}
	return "MirrorKind(" + strconv.Itoa(int(k)) + ")"
}

// MirrorPair is a pair of hosts that share near-duplicate clusters.
type MirrorPair struct {
	// A and B are the hosts, A < B. For an [Alias] pair they are the two
	// host names; otherwise they are host-alias keys (canon.HostKey), so
	// www.x.com and x.com count as one host.
	A, B string
	// Kind says whether the pair is a confirmed mirror, an alias pair or
	// unconfirmed.
	Kind MirrorKind
	// Shared is the number of clusters holding URLs of both hosts.
	Shared int
	// Confirmed is the fraction of the shared clusters in which a URL of
	// one host ends in the same path (its last SuffixArcs segments, or all
	// of them when fewer, query removed) as a URL of the other host in
	// the same cluster. The check goes through Bloom filters of 1% false
	// positives, so it can overstate by about that much.
	Confirmed float64
	// LastArc is the same fraction when only the last path segment must
	// agree (Fetterly reports both).
	LastArc float64
}

// Mirrors finds mirrored hosts in clusters of near-duplicate pages as
// Fetterly, Manasse and Najork do (§2, §4): each cluster is a list of URLs,
// and two hosts are a candidate pair when at least minShared clusters
// (DefaultMinShared when minShared ≤ 0) hold URLs of both. A host never
// pairs with itself (Fetterly's auto-mirrors). Host names are compared by
// canon.HostKey, so names of one site (www.x.com, x.com) pair as an
// [Alias] and are merged for mirror detection, where Fetterly picked one
// preferred name per IP address.
//
// A candidate pair is confirmed by URL-path suffixes: every host gets a
// Bloom filter holding, for each of its URLs, the cluster number with the
// URL's last 1 to SuffixArcs path segments; a shared cluster is confirmed
// when some URL of one host in it has its suffix in the other host's
// filter under the same cluster number (Fetterly's per-cluster filter,
// keyed per host). The pair is a [Mirror] when more than half of its
// shared clusters are confirmed, else [Unconfirmed].
//
// URLs are canonicalized with canon.URL; URLs it rejects are skipped, and
// a URL listed twice in a cluster counts once. The result is sorted by
// Shared, most first, then by hosts.
func Mirrors(clusters [][]string, minShared int) []MirrorPair {
	if minShared <= 0 {
		minShared = DefaultMinShared
	}
	type member struct{ host, key, path string }
	cs := make([][]member, 0, len(clusters))
	for _, c := range clusters {
		var ms []member
		seen := map[string]bool{}
		for _, raw := range c {
			cu, err := canon.URL(raw)
			if err != nil || seen[cu] {
				continue
			}
			seen[cu] = true
			u, err := url.Parse(cu)
			if err != nil {
				continue
			}
			ms = append(ms, member{host: u.Hostname(), key: canon.HostKey(u.Hostname()), path: u.EscapedPath()})
		}
		cs = append(cs, ms)
	}

	// Fetterly's pruning: a host needs minShared non-singleton clusters.
	keyClusters, nameClusters := map[string]int{}, map[string]int{}
	for _, ms := range cs {
		keys, names := map[string]bool{}, map[string]bool{}
		for _, m := range ms {
			keys[m.key], names[m.host] = true, true
		}
		if len(keys) > 1 {
			for k := range keys {
				keyClusters[k]++
			}
		}
		if len(names) > 1 {
			for n := range names {
				nameClusters[n]++
			}
		}
	}

	type pair struct{ a, b string }
	shared := map[pair][]int{}      // mirror candidates by key
	aliasShared := map[pair][]int{} // alias candidates by name
	for ci, ms := range cs {
		var keys, names []string
		for _, m := range ms {
			if keyClusters[m.key] >= minShared {
				keys = append(keys, m.key)
			}
			if nameClusters[m.host] >= minShared {
				names = append(names, m.host)
			}
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		for i, a := range keys {
			for _, b := range keys[i+1:] {
				shared[pair{a, b}] = append(shared[pair{a, b}], ci)
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
		for i, a := range names {
			for _, b := range names[i+1:] {
				if canon.HostKey(a) == canon.HostKey(b) {
					aliasShared[pair{a, b}] = append(aliasShared[pair{a, b}], ci)
				}
			}
		}
	}

	// One filter per host (by key for mirrors, by name for aliases) over
	// "cluster|suffix" for the suffixes of 1 to SuffixArcs segments.
	filters := map[string]*bloom.BloomFilter{}
	need := map[string]bool{}
	for p, cl := range shared {
		if len(cl) >= minShared {
			need["k:"+p.a], need["k:"+p.b] = true, true
		}
	}
	for p, cl := range aliasShared {
		if len(cl) >= minShared {
			need["n:"+p.a], need["n:"+p.b] = true, true
		}
	}
	items := map[string][]string{}
	for ci, ms := range cs {
		for _, m := range ms {
			for _, h := range []string{"k:" + m.key, "n:" + m.host} {
				if !need[h] {
					continue
				}
				for n := 1; n <= SuffixArcs; n++ {
					items[h] = append(items[h], suffixItem(ci, n, m.path))
				}
			}
		}
	}
	for h, its := range items {
		f := bloom.NewWithEstimates(uint(len(its)), 0.01)
		for _, it := range its {
			f.AddString(it)
		}
		filters[h] = f
	}

	// confirm returns the fractions of clusters cl where a URL of host a
	// has its n-segment suffix in b's filter, or one of b in a's.
	confirm := func(a, b string, cl []int, n int, of func(member) string) float64 {
		fa, fb := filters[a], filters[b]
		ok := 0
		for _, ci := range cl {
			for _, m := range cs[ci] {
				var f *bloom.BloomFilter
				switch of(m) {
				case a:
					f = fb
				case b:
					f = fa
				}
				if f != nil && f.TestString(suffixItem(ci, n, m.path)) {
					ok++
					break
				}
			}
		}
		return float64(ok) / float64(len(cl))
	}
	byKey := func(m member) string { return "k:" + m.key }
	byName := func(m member) string { return "n:" + m.host }

	var out []MirrorPair
	for p, cl := range shared {
		if len(cl) < minShared {
			continue
		}
		mp := MirrorPair{A: p.a, B: p.b, Shared: len(cl),
			Confirmed: confirm("k:"+p.a, "k:"+p.b, cl, SuffixArcs, byKey),
			LastArc:   confirm("k:"+p.a, "k:"+p.b, cl, 1, byKey)}
		if mp.Confirmed > 0.5 {
			mp.Kind = Mirror
		}
		out = append(out, mp)
	}
	for p, cl := range aliasShared {
		if len(cl) < minShared {
			continue
		}
		out = append(out, MirrorPair{A: p.a, B: p.b, Kind: Alias, Shared: len(cl),
			Confirmed: confirm("n:"+p.a, "n:"+p.b, cl, SuffixArcs, byName),
			LastArc:   confirm("n:"+p.a, "n:"+p.b, cl, 1, byName)})
	}
	slices.SortFunc(out, func(x, y MirrorPair) int {
		return cmp.Or(cmp.Compare(y.Shared, x.Shared), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B), cmp.Compare(x.Kind, y.Kind))
	})
	return out
}

// suffixItem returns the Bloom filter item of the last n segments of path
// (all of them when fewer) in cluster ci. A trailing slash counts as an
// empty last segment, so /a/ and /a differ.
func suffixItem(ci, n int, path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) > n {
		segs = segs[len(segs)-n:]
	}
	return strconv.Itoa(ci) + "|" + strings.Join(segs, "/")
}

// WriteMirrors writes pairs as an aligned text table.
func WriteMirrors(w io.Writer, pairs []MirrorPair) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host a\thost b\tkind\tshared\tconfirmed\tlast arc")
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.2f\n", p.A, p.B, p.Kind, p.Shared, p.Confirmed, p.LastArc)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
