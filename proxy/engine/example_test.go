package engine_test

import (
	"fmt"

	"github.com/winnow-search/winnow/proxy/engine"
)

func Example() {
	a, err := engine.New(engine.Config{Kind: "elasticsearch"})
	if err != nil {
		panic(err)
	}
	// The client asks for 2 hits; the backend is asked for 3 times as many.
	req, w, _ := a.Rewrite(engine.Request{Method: "GET", Path: "/docs/_search?q=winnow&size=2"}, 3)
	fmt.Println(req.Path)

	body := []byte(`{"took":2,"hits":{"total":{"value":3,"relation":"eq"},"hits":[
{"_id":"a","_source":{"url":"https://example.org/a","title":"A"}},
{"_id":"b","_source":{"url":"https://www.example.org/a","title":"A (mirror)"}},
{"_id":"c","_source":{"url":"https://example.org/c","title":"C"}}]}}`)
	p, _ := a.Parse(body, "application/json")
	marks := []engine.Mark{
		{Cluster: "1", Winner: 0},
		{Cluster: "1", Winner: 0, Relation: "duplicate", Explain: "mirror"},
		{Cluster: "2", Winner: 2},
	}
	out, _ := a.Render(nil, p, marks, engine.Remove, w)
	fmt.Println(string(out))
	// Output:
	// /docs/_search?from=0&q=winnow&size=6
	// {"took":2,"hits":{"total":{"value":3,"relation":"eq"},"hits":[
	// {"_id":"a","_source":{"url":"https://example.org/a","title":"A"}},
	// {"_id":"c","_source":{"url":"https://example.org/c","title":"C"}}]}}
}
