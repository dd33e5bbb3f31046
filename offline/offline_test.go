package offline

import (
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster"
)

// TestKeysNumberRepeats: every repeat of an ID gets its own number; the
// third occurrence is #2, not #1 again.
func TestKeysNumberRepeats(t *testing.T) {
	var k Keys
	var got []string
	for _, base := range []string{"a", "b", "a", "a", "b", "c", "a"} {
		got = append(got, k.Next(base))
	}
	want := []string{"a", "b", "a#1", "a#2", "b#1", "c", "a#3"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	if got := RepeatKey("a", 2); got != "a#2" {
		t.Errorf("RepeatKey(a, 2) = %q, want a#2", got)
	}
	if got := InputKey(true, "in.jsonl", "7"); got != "in.jsonl:7" {
		t.Errorf("InputKey = %q, want in.jsonl:7", got)
	}
}

// TestRankingKeyOrder: rank keys sort documents as the rules do, and
// documents the rules cannot tell apart by their keys; a popularity
// tolerance makes bands.
func TestRankingKeyOrder(t *testing.T) {
	docs := []Doc{
		{Key: "k1", URL: "http://a.example/page"},
		{Key: "k2", URL: "https://a.example/page"},
		{Key: "k3", URL: "https://a.example/p"},
		{Key: "k4", URL: "https://a.example/p", Popularity: 3},
		{Key: "k0", URL: "https://a.example/p"},
		{Key: "k5", URL: "https://a.example/p?x=1", Popularity: 3.4},
	}
	order := func(r Ranking) []string {
		ds := slices.Clone(docs)
		slices.SortFunc(ds, func(a, b Doc) int { return strings.Compare(r.Key(a), r.Key(b)) })
		var keys []string
		for _, d := range ds {
			keys = append(keys, d.Key)
		}
		return keys
	}
	if got, want := order(Ranking{}), []string{"k5", "k4", "k0", "k3", "k2", "k1"}; !slices.Equal(got, want) {
		t.Errorf("exact popularity: order %v, want %v", got, want)
	}
	banded := NewRanking(cluster.WinnerRules{PopularityTolerance: 1})
	if got, want := order(banded), []string{"k4", "k5", "k0", "k3", "k2", "k1"}; !slices.Equal(got, want) {
		t.Errorf("bands of 1: order %v, want %v", got, want)
	}
	for _, tc := range []struct {
		r    Ranking
		a, b int
		want string
	}{
		{Ranking{}, 5, 4, "popularity"},
		{banded, 3, 5, "shorter"},
		{Ranking{}, 2, 1, "shorter"},
		{Ranking{}, 1, 0, "https"},
		{Ranking{}, 3, 2, "popularity"},
		{Ranking{}, 4, 2, "key"},
	} {
		if got := tc.r.Rule(docs[tc.a], docs[tc.b]); got != tc.want {
			t.Errorf("Rule(%s, %s) = %q, want %q", docs[tc.a].Key, docs[tc.b].Key, got, tc.want)
		}
	}
}

func TestFormatCounts(t *testing.T) {
	if got, want := FormatCounts(map[string]int{"b": 2, "a": 2, "c": 5}), "c 5, a 2, b 2"; got != want {
		t.Errorf("FormatCounts = %q, want %q", got, want)
	}
	if got := FormatCounts(map[string]int64{}); got != "" {
		t.Errorf("FormatCounts(empty) = %q, want \"\"", got)
	}
}
