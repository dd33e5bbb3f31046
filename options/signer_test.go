package options

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/config"
)

// TestProxyClusterFeedSigner: the proxy's cluster client names the
// fingerprint of the proxy's signer with every ingest (the feed), and a
// signature setting changes it.
func TestProxyClusterFeedSigner(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req client.IngestRequest
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("ingest body %q: %v", b, err)
		}
		got <- req.SignerFingerprint
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"results":[{"url":"https://a.example/","status":"new"}]}`)
	}))
	defer srv.Close()
	var prints []string
	for _, sets := range [][]string{{"serve.cluster=" + srv.URL}, {"serve.cluster=" + srv.URL, "signature.shingle_words=4"}} {
		c, err := config.Load("", nil, sets)
		if err != nil {
			t.Fatal(err)
		}
		o, err := Proxy(c, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Cluster.Ingest(context.Background(), []client.Page{{URL: "https://a.example/", Signature: []byte{1}}}); err != nil {
			t.Fatal(err)
		}
		fp := <-got
		if want := Signer(c).Fingerprint(); fp != want {
			t.Errorf("%v: the feed named %q, want the signer's %s", sets, fp, want)
		}
		prints = append(prints, fp)
	}
	if prints[0] == prints[1] {
		t.Errorf("signature.shingle_words changed: the same fingerprint %s", prints[0])
	}
}
