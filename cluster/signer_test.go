package cluster

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
)

// TestSignerFingerprint: the store records the fingerprint of the first
// batch that names one; a batch naming another is refused whole (a
// *SignerError naming both; 409 over HTTP through the Go client, which
// sends its Options.SignerFingerprint), and a batch naming none is
// accepted and counted.
func TestSignerFingerprint(t *testing.T) {
	ps := byPage(t, "Benchmarking")
	s := newTestService(t, Options{})
	const mine, theirs = "00112233445566aa", "ffeeddccbbaa9988"
	if _, err := s.IngestSigned(mine, []client.Page{{URL: "https://a.example/1", Signature: ps[0].sig}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.st.Meta(); m.SignerFingerprint != mine {
		t.Errorf("recorded fingerprint %q, want %q", m.SignerFingerprint, mine)
	}
	if _, err := s.IngestSigned(mine, []client.Page{{URL: "https://a.example/2", Signature: ps[1].sig}}); err != nil {
		t.Errorf("a batch of the store's fingerprint: %v", err)
	}
	_, err := s.IngestSigned(theirs, []client.Page{{URL: "https://a.example/3", Signature: ps[2].sig}})
	var se *SignerError
	if !errors.As(err, &se) || se.Store != mine || se.Batch != theirs {
		t.Fatalf("a batch of another fingerprint: error %v, want a SignerError of %s and %s", err, mine, theirs)
	}
	if lr, _ := s.Lookup([]string{"https://a.example/3"}); lr[0].Known {
		t.Error("a page of the refused batch was applied")
	}
	if _, err := s.Ingest([]client.Page{{URL: "https://a.example/4", Signature: ps[3].sig}}); err != nil {
		t.Errorf("a batch without a fingerprint: %v", err)
	}

	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c, err := client.New(srv.URL, client.Options{SignerFingerprint: theirs})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Ingest(context.Background(), []client.Page{{URL: "https://a.example/5", Signature: ps[4].sig}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || !strings.Contains(ae.Message, mine) || !strings.Contains(ae.Message, theirs) {
		t.Errorf("client of another fingerprint: error %v, want a 409 naming %s and %s", err, mine, theirs)
	}
	c, _ = client.New(srv.URL, client.Options{SignerFingerprint: mine})
	if _, err := c.Ingest(context.Background(), []client.Page{{URL: "https://a.example/5", Signature: ps[4].sig}}); err != nil {
		t.Errorf("client of the store's fingerprint: %v", err)
	}

	var metrics strings.Builder
	s.WriteMetrics(&metrics)
	for _, want := range []string{
		`winnow_cluster_service_ingest_batches_signer_total{signer="matched"} 3`,
		`winnow_cluster_service_ingest_batches_signer_total{signer="missing"} 1`,
		`winnow_cluster_service_ingest_batches_signer_total{signer="refused"} 2`,
	} {
		if !strings.Contains(metrics.String(), want) {
			t.Errorf("metrics: no %q", want)
		}
	}
	if strings.Contains(metrics.String(), "winnow_backend_ingest_batches_signer_total") {
		t.Error("metrics: a deprecated alias of the new signer metric")
	}
}
