package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Page is one page sent to the service by [Client.Ingest].
type Page struct {
	// URL is the page's absolute http or https URL.
	URL string `json:"url"`
	// Signature is the page's similarity.Signature in its binary encoding
	// (base64 in JSON). It may be empty only for a redirect or a delete.
	Signature []byte `json:"signature"`
	// Popularity is the page's popularity score (link popularity, clicks):
	// the highest score wins its group.
	Popularity float64 `json:"popularity,omitempty"`
	// RedirectTo is the URL the page redirects to, if it does: the page is
	// then a redirect duplicate of its target (Zhu et al. §5.1 case 3).
	RedirectTo string `json:"redirect_to,omitempty"`
	// Deleted removes the page.
	Deleted bool `json:"deleted,omitempty"`
	// Version orders the writes of one page, as Elasticsearch's external
	// versions do: a number the client chooses that grows with each
	// write of the page (its fetch time in nanoseconds, a sequence
	// number). The service applies a write only when its version is
	// above the stored one and answers [StatusStale] otherwise, so
	// batches that arrive out of order (several crawler workers, a
	// replayed queue) leave the newest write in place; a versioned
	// delete leaves a tombstone holding its version for a while (the
	// service's tombstone TTL). Zero means no version: the write applies
	// whatever is stored and leaves the page unversioned.
	Version uint64 `json:"version,omitempty"`
}

// Statuses of an [IngestResult].
const (
	StatusNew           = "new"            // a new page founded a group
	StatusJoined        = "joined"         // a new page joined an existing group
	StatusStayed        = "stayed"         // a known page still matches its group's winner
	StatusMoved         = "moved"          // a known page left its group for another or a new one
	StatusWinnerChanged = "winner-changed" // the page's ingest changed its group's winner
	StatusRedirect      = "redirect"       // the page is a redirect duplicate
	StatusDeleted       = "deleted"        // the page was removed
	StatusStale         = "stale"          // not applied: the page's stored version is as new or newer (IngestResult.Version)
)

// IngestRequest is the body of POST /v1/ingest.
type IngestRequest struct {
	// SignerFingerprint names the signing settings the pages'
	// signatures were made with (page.Signer.Fingerprint). The service
	// records the first one it is sent and refuses a batch naming
	// another with 409 Conflict: signatures of other settings do not
	// compare. Empty: not checked (counted in the service's metrics).
	SignerFingerprint string `json:"signer_fingerprint,omitempty"`
	Pages             []Page `json:"pages"`
}

// IngestResult is the outcome of one ingested page, in request order.
type IngestResult struct {
	URL string `json:"url"`
	// Group is the page's group after the ingest; "" for a deleted page
	// or a redirect whose target is not known yet.
	Group string `json:"group,omitempty"`
	// Winner is the group's winner after the ingest.
	Winner string `json:"winner,omitempty"`
	// Status is one of the Status constants.
	Status string `json:"status"`
	// Version is the page's stored version after the ingest: the
	// write's own when applied, the newer stored one (a page's or a
	// tombstone's) when [StatusStale]; 0 when unversioned.
	Version uint64 `json:"version,omitempty"`
}

// IngestResponse is the body of a successful POST /v1/ingest.
type IngestResponse struct {
	Results []IngestResult `json:"results"`
}

// LookupRequest is the body of POST /v1/lookup.
type LookupRequest struct {
	URLs []string `json:"urls"`
}

// LookupResult is the duplicate status of one URL, in request order.
type LookupResult struct {
	URL string `json:"url"`
	// Known reports that the service holds the page.
	Known bool `json:"known"`
	// Group is the page's group ("" when unknown or a pending redirect).
	Group string `json:"group,omitempty"`
	// Winner is the group's winner, set only for the winner itself and
	// for members verified against it (Zhu §5.2): a member that no longer
	// matches its winner is not reported as its duplicate.
	Winner string `json:"winner,omitempty"`
	// IsWinner reports that the page is its group's winner.
	IsWinner bool `json:"is_winner,omitempty"`
	// Size is the number of members of the group.
	Size int `json:"size,omitempty"`
}

// LookupResponse is the body of a successful POST /v1/lookup.
type LookupResponse struct {
	Results []LookupResult `json:"results"`
}

// Group is one duplicate group, the body of GET /v1/groups/{id}.
type Group struct {
	ID     string `json:"id"`
	Winner string `json:"winner"`
	// Members lists every member, the winner included, sorted.
	Members []string `json:"members"`
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
	// Item is the index of the offending item of the request, or -1.
	Item int `json:"item"`
	// URL is the offending item's URL, if any.
	URL string `json:"url,omitempty"`
}

// ErrUnavailable is returned (wrapped) when the service cannot be reached
// or answers with a 5xx status.
var ErrUnavailable = errors.New("client: service unavailable")

// ErrNotFound is returned by [Client.Group] for an unknown group.
var ErrNotFound = errors.New("client: not found")

// APIError is a 4xx answer of the service: the request was refused.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Item is the index of the offending item, or -1.
	Item int
	// URL is the offending item's URL, if any.
	URL string
	// Message is the service's error message.
	Message string
}

// Error returns the message with the status and item.
func (e *APIError) Error() string {
	if e.Item >= 0 {
		return fmt.Sprintf("client: status %d: item %d (%s): %s", e.Status, e.Item, e.URL, e.Message)
	}
	return fmt.Sprintf("client: status %d: %s", e.Status, e.Message)
}

// Defaults of Options.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxBatch    = 1000
	DefaultMaxResponse = 64 << 20
)

// Options configures a Client. The zero value uses the defaults.
type Options struct {
	// Timeout bounds each call when ctx has no earlier deadline. Zero
	// means DefaultTimeout (5s).
	Timeout time.Duration
	// MaxBatch is the most pages or URLs sent in one request; longer
	// calls are split. Zero means DefaultMaxBatch (1000); it must not
	// exceed the service's own limit.
	MaxBatch int
	// MaxResponse bounds a response body in bytes. Zero means
	// DefaultMaxResponse (64 MiB).
	MaxResponse int64
	// HTTPClient sends the requests; nil means a new http.Client of its
	// own (never http.DefaultClient).
	HTTPClient *http.Client
	// SignerFingerprint is sent with every ingest
	// (IngestRequest.SignerFingerprint): the fingerprint of the settings
	// that signed the pages (page.Signer.Fingerprint). Empty sends none.
	SignerFingerprint string
}

// Client calls the cluster service. It is safe for concurrent use.
type Client struct {
	base *url.URL
	o    Options
	hc   *http.Client
}

// New returns a client of the service at baseURL (e.g.
// "http://127.0.0.1:7070").
func New(baseURL string, o Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: invalid base URL %q", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.MaxBatch = cmp.Or(o.MaxBatch, DefaultMaxBatch)
	o.MaxResponse = cmp.Or(o.MaxResponse, DefaultMaxResponse)
	if o.Timeout < 0 || o.MaxBatch < 0 || o.MaxResponse < 0 {
		return nil, errors.New("client: negative option")
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}}
	}
	return &Client{base: u, o: o, hc: hc}, nil
}

// Ingest sends pages to the service and returns one result per page in
// order. A batch longer than Options.MaxBatch is sent in several requests,
// each applied all-or-nothing; on an error the results of the requests
// already applied are returned with it.
func (c *Client) Ingest(ctx context.Context, pages []Page) ([]IngestResult, error) {
	out := make([]IngestResult, 0, len(pages))
	for start := 0; start < len(pages); start += c.o.MaxBatch {
		end := min(start+c.o.MaxBatch, len(pages))
		var resp IngestResponse
		if err := c.do(ctx, http.MethodPost, "/v1/ingest", IngestRequest{SignerFingerprint: c.o.SignerFingerprint, Pages: pages[start:end]}, &resp); err != nil {
			return out, offset(err, start)
		}
		if len(resp.Results) != end-start {
			return out, fmt.Errorf("%w: %d results for %d pages", ErrUnavailable, len(resp.Results), end-start)
		}
		out = append(out, resp.Results...)
	}
	return out, nil
}

// Lookup returns the duplicate status of each URL, in order.
func (c *Client) Lookup(ctx context.Context, urls []string) ([]LookupResult, error) {
	out := make([]LookupResult, 0, len(urls))
	for start := 0; start < len(urls); start += c.o.MaxBatch {
		end := min(start+c.o.MaxBatch, len(urls))
		var resp LookupResponse
		if err := c.do(ctx, http.MethodPost, "/v1/lookup", LookupRequest{URLs: urls[start:end]}, &resp); err != nil {
			return nil, offset(err, start)
		}
		if len(resp.Results) != end-start {
			return nil, fmt.Errorf("%w: %d results for %d URLs", ErrUnavailable, len(resp.Results), end-start)
		}
		out = append(out, resp.Results...)
	}
	return out, nil
}

// Group returns the group id; the error wraps ErrNotFound for an unknown
// group.
func (c *Client) Group(ctx context.Context, id string) (*Group, error) {
	var g Group
	if err := c.do(ctx, http.MethodGet, "/v1/groups/"+url.PathEscape(id), nil, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// offset shifts the item index of an APIError by the start of its chunk.
func offset(err error, start int) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.Item >= 0 {
		ae.Item += start
	}
	return err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.Timeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		body = bytes.NewReader(b)
	}
	u := *c.base
	u.Path += path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
		}
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.o.MaxResponse+1))
	if err != nil {
		return fmt.Errorf("%w: reading response: %v", ErrUnavailable, err)
	}
	if int64(len(data)) > c.o.MaxResponse {
		return fmt.Errorf("client: response over %d bytes", c.o.MaxResponse)
	}
	if resp.StatusCode >= 500 {
		return fmt.Errorf("%w: status %d: %s", ErrUnavailable, resp.StatusCode, errorMessage(data))
	}
	if resp.StatusCode == http.StatusNotFound && method == http.MethodGet {
		return fmt.Errorf("%w: %s", ErrNotFound, path)
	}
	if resp.StatusCode >= 400 {
		ae := &APIError{Status: resp.StatusCode, Item: -1}
		var eb ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
			ae.Item, ae.URL, ae.Message = eb.Item, eb.URL, eb.Error
		} else {
			ae.Message = errorMessage(data)
		}
		return ae
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("client: decoding response: %w", err)
	}
	return nil
}

func errorMessage(data []byte) string {
	var eb ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
		return eb.Error
	}
	s := strings.TrimSpace(string(data[:min(len(data), 200)]))
	return cmp.Or(s, "no body")
}
