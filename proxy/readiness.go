package proxy

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// readinessTTL is how long one probe of the engines answers /readyz:
// orchestrators probe every few seconds, and each probe would otherwise
// open a connection to every engine.
const readinessTTL = 2 * time.Second

// readiness answers /readyz: whether the engines winnow needs accept a
// connection. The transparent engine must (without it every client
// request fails); without one, at least one metasearch engine must.
type readiness struct {
	mu      sync.Mutex
	checked time.Time
	ready   bool
	report  string
}

// checkReadiness returns whether the engines are reachable and a line per
// engine, probing at most once per readinessTTL.
func (s *Server) checkReadiness() (bool, string) {
	r := &s.readiness
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < readinessTTL {
		return r.ready, r.report
	}
	type result struct {
		u   *upstream
		err error
	}
	results := make([]result, len(s.engines))
	var wg sync.WaitGroup
	for i, u := range s.engines {
		wg.Go(func() { results[i] = result{u, u.reachable()} })
	}
	wg.Wait()
	var b strings.Builder
	anyOK, transpOK := false, true
	for _, res := range results {
		if res.err != nil {
			fmt.Fprintf(&b, "engine %s: unreachable: %v\n", res.u.Name, res.err)
			if res.u == s.transp {
				transpOK = false
			}
			continue
		}
		anyOK = true
		fmt.Fprintf(&b, "engine %s: reachable\n", res.u.Name)
	}
	ready := transpOK && (anyOK || len(s.engines) == 0)
	r.checked, r.ready, r.report = time.Now(), ready, b.String()
	return ready, r.report
}

// reachable dials the engine's host within its timeout (at most one
// second: a probe must answer before the orchestrator's own timeout).
func (u *upstream) reachable() error {
	host := u.base.Host
	if u.base.Port() == "" {
		if u.base.Scheme == "https" {
			host = net.JoinHostPort(u.base.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.base.Hostname(), "80")
		}
	}
	c, err := net.DialTimeout("tcp", host, min(u.Timeout, time.Second))
	if err != nil {
		return err
	}
	return c.Close()
}
