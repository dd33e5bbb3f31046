package engine

import "testing"

// TestParseTags reads the tags winnow index writes from Elasticsearch and
// Solr hits; an untagged hit has none.
func TestParseTags(t *testing.T) {
	for _, tc := range []struct {
		kind, body string
	}{
		{"elasticsearch", `{"hits":{"total":{"value":3,"relation":"eq"},"hits":[
			{"_id":"a","_score":2,"_source":{"url":"http://x/a","winnow_group":"00000000000000aa","winnow_winner":true,"winnow_removable":false}},
			{"_id":"b","_score":1,"_source":{"url":"http://x/b","winnow_probability":0.97,"winnow_removable":true,"winnow_winner":false,"winnow_group":"00000000000000aa"}},
			{"_id":"c","_score":1,"_source":{"url":"http://x/c"}}]}}`},
		{"solr", `{"response":{"numFound":3,"start":0,"docs":[
			{"id":"a","url":"http://x/a","winnow_group":"00000000000000aa","winnow_winner":true,"winnow_removable":false},
			{"id":"b","url":"http://x/b","winnow_group":"00000000000000aa","winnow_winner":false,"winnow_removable":true},
			{"id":"c","url":"http://x/c"}]}}`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			a, err := New(Config{Kind: tc.kind})
			if err != nil {
				t.Fatal(err)
			}
			p, err := a.Parse([]byte(tc.body), "application/json")
			if err != nil {
				t.Fatal(err)
			}
			want := []Result{
				{URL: "http://x/a", Group: "00000000000000aa", GroupWinner: true},
				{URL: "http://x/b", Group: "00000000000000aa", Removable: true},
				{URL: "http://x/c"},
			}
			if len(p.Results) != len(want) {
				t.Fatalf("%d results, want %d", len(p.Results), len(want))
			}
			for i, w := range want {
				r := p.Results[i]
				if r.URL != w.URL || r.Group != w.Group || r.GroupWinner != w.GroupWinner || r.Removable != w.Removable {
					t.Errorf("result %d = %s group %q winner %v removable %v, want %s %q %v %v", i, r.URL, r.Group, r.GroupWinner, r.Removable, w.URL, w.Group, w.GroupWinner, w.Removable)
				}
			}
		})
	}
}
