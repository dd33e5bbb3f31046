package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
)

// maxBodyPerItem bounds a request body: MaxBatch items of this size.
const maxBodyPerItem = 64 << 10

// Handler returns the HTTP API: POST /v1/ingest, POST /v1/lookup,
// GET /v1/groups/{id}, GET /v1/winners, GET /metrics and GET /healthz.
// Errors are JSON client.ErrorBody values: 400 for invalid input (naming
// the item index and URL; nothing of the request is applied), 413 for an
// oversized batch or body, 415 for a POST body not declared
// application/json, 409 for an ingest batch signed with other settings
// than the store's signatures ([SignerError]), 404 for an unknown group,
// 500 for a store failure.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/ingest", s.handleIngest)
	mux.HandleFunc("POST /v1/lookup", s.handleLookup)
	mux.HandleFunc("GET /v1/groups/{id}", s.handleGroup)
	mux.HandleFunc("GET /v1/winners", s.handleWinners)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		s.WriteMetrics(w)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.st.Meta(); err != nil {
			s.writeError(w, http.StatusServiceUnavailable, -1, "", err)
			return
		}
		if f, ok := s.st.(storeFailer); ok {
			if err := f.writeFailure(); err != nil {
				s.writeError(w, http.StatusServiceUnavailable, -1, "", err)
				return
			}
		}
		io.WriteString(w, "ok\n")
	})
	return mux
}

// decode reads one JSON value with unknown fields refused. The body must
// be declared application/json: a web page of any origin can make a
// browser POST a text/plain or form body, or one without a type, without
// asking the service (a CORS simple request), so that any page an
// operator opens could ingest and delete pages.
func (s *Service) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.writeError(w, http.StatusUnsupportedMediaType, -1, "",
			fmt.Errorf("cluster: Content-Type %q, want application/json", r.Header.Get("Content-Type")))
		return false
	}
	body := http.MaxBytesReader(w, r.Body, int64(s.o.MaxBatch)*maxBodyPerItem)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err != nil {
		status := http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		s.writeError(w, status, -1, "", fmt.Errorf("cluster: invalid JSON: %v", err))
		return false
	}
	return true
}

func (s *Service) handleIngest(w http.ResponseWriter, r *http.Request) {
	var req client.IngestRequest
	if !s.decode(w, r, &req) {
		return
	}
	res, err := s.IngestSigned(req.SignerFingerprint, req.Pages)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, client.IngestResponse{Results: res})
}

func (s *Service) handleLookup(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req client.LookupRequest
	if !s.decode(w, r, &req) {
		return
	}
	res, err := s.Lookup(req.URLs)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, client.LookupResponse{Results: res})
	s.m.lookupDuration.UpdateDuration(start)
}

func (s *Service) handleGroup(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	g, err := s.Group(id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if g == nil {
		s.writeError(w, http.StatusNotFound, -1, "", fmt.Errorf("cluster: no group %q", id))
		return
	}
	writeJSON(w, http.StatusOK, g)
}

// handleWinners streams [ExportWinners]: the groups file of
// `winnow-beam assign -groups`, as JSON Lines. A store failure before the
// first line is a 500; after it, the transfer is aborted, so that a
// client never takes a cut list for the whole one.
func (s *Service) handleWinners(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/jsonl")
	cw := &countingWriter{w: w}
	if err := ExportWinners(s.st, cw); err != nil {
		if cw.n == 0 {
			s.fail(w, err)
			return
		}
		s.o.Logger.Error("cluster_winners_export_failed", "err", err, "bytes_sent", cw.n)
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (s *Service) fail(w http.ResponseWriter, err error) {
	var se *SignerError
	if errors.As(err, &se) {
		s.writeError(w, http.StatusConflict, -1, "", err)
		return
	}
	var ie *InputError
	if errors.As(err, &ie) {
		status := http.StatusBadRequest
		if errors.Is(err, ErrBatchSize) {
			status = http.StatusRequestEntityTooLarge
		}
		s.writeError(w, status, ie.Item, ie.URL, ie.Err)
		return
	}
	s.o.Logger.Error("cluster_service_request_failed", "err", err)
	s.writeError(w, http.StatusInternalServerError, -1, "", err)
}

func (s *Service) writeError(w http.ResponseWriter, status, item int, u string, err error) {
	writeJSON(w, status, client.ErrorBody{Error: err.Error(), Item: item, URL: u})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
