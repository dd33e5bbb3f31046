package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/internal/toxiproxy"
)

// freePort returns a loopback port that is free, as is the port 10000
// above it (the cluster bus).
func freePort(t *testing.T) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		bus.Close()
		return port
	}
	t.Fatal("no free port pair")
	return 0
}

// redisCluster starts a three-node Redis Cluster on loopback in a
// temporary directory and returns its addresses; the nodes are killed at
// the end of the test. It skips when redis-server is missing, unless
// CI=true.
func redisCluster(t *testing.T) []string {
	t.Helper()
	addrs, _ := redisClusterThrough(t, nil)
	return addrs
}

// redisClusterThrough is redisCluster with, when tp is not nil, a
// Toxiproxy proxy in front of each node: the nodes announce the proxies'
// ports, so the client's every command to a node, after a redirect too,
// goes through its proxy (the nodes' own bus is direct). It returns the
// addresses the client is to use, and the proxies.
func redisClusterThrough(t *testing.T, tp *toxiproxy.Server) ([]string, []*toxiproxy.Proxy) {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err == nil {
		_, err = exec.LookPath("redis-cli")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server and redis-cli are needed: %v", err)
		}
		t.Skipf("redis-server and redis-cli are needed: %v", err)
	}
	var direct, addrs []string
	var proxies []*toxiproxy.Proxy
	for i := range 3 {
		port := freePort(t)
		announce := strconv.Itoa(port)
		addr := "127.0.0.1:" + announce
		if tp != nil {
			p := tp.Proxy(t, fmt.Sprintf("redis-%d-%d", i, port), addr)
			_, announce, _ = strings.Cut(p.Listen, ":")
			addr = p.Listen
			proxies = append(proxies, p)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-announce-ip", "127.0.0.1", "--cluster-announce-port", announce,
			"--cluster-announce-bus-port", strconv.Itoa(port+10000),
			"--dir", dir, "--save", "", "--appendonly", "no", "--protected-mode", "no")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		direct = append(direct, "127.0.0.1:"+strconv.Itoa(port))
		addrs = append(addrs, addr)
	}
	for _, a := range direct {
		waitRedis(t, a, "PING", "PONG")
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, a := range direct {
		waitRedis(t, a, "CLUSTER INFO", "cluster_state:ok")
	}
	return addrs, proxies
}

// waitRedis runs a redis-cli command on addr until its output holds want.
func waitRedis(t *testing.T, addr, command, want string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	var out []byte
	for range 200 {
		args := append([]string{"-h", host, "-p", port}, strings.Fields(command)...)
		out, _ = exec.Command("redis-cli", args...).CombinedOutput()
		if strings.Contains(string(out), want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis-cli -p %s %s = %q, want %q", port, command, out, want)
}

// TestRedisStore runs the service on a real three-node Redis Cluster: the
// groups of the LLVM sample, redirects, a reopened store, and the replay
// of a journal left by an interrupted Apply.
func TestRedisStore(t *testing.T) {
	addrs := redisCluster(t)
	st, err := OpenRedis(addrs, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := newTestService(t, Options{SampleSize: 20})
	s, err := New(st, Options{SampleSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	var pages []client.Page
	var urls []string
	for _, p := range signedSample(t) {
		pages = append(pages, client.Page{URL: p.url, Signature: p.sig})
		urls = append(urls, p.url)
	}
	pages = append(pages, client.Page{URL: "https://r.example/", RedirectTo: pages[0].URL})
	for start := 0; start < len(pages); start += 10 {
		batch := pages[start:min(start+10, len(pages))]
		mustIngest(t, mem, batch...)
		mustIngest(t, s, batch...)
	}
	want := groupsOf(t, mem, urls)
	if got := groupsOf(t, s, urls); !slices.Equal(got, want) {
		t.Errorf("groups on Redis = %q, want %q (memory store)", got, want)
	}
	// The keys are spread over the three shards.
	shards := map[string]bool{}
	for _, u := range urls {
		n, err := st.c.MasterForKey(context.Background(), redisPage(u))
		if err != nil {
			t.Fatal(err)
		}
		shards[n.Options().Addr] = true
	}
	if len(shards) != 3 {
		t.Errorf("page keys on %d shards, want 3", len(shards))
	}
	st.Close()

	// Reopened, the service rebuilds the same groups and candidate tables.
	st, err = OpenRedis(addrs, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err = New(st, Options{SampleSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	if got := groupsOf(t, s, urls); !slices.Equal(got, want) {
		t.Errorf("groups after reopening = %q, want %q", got, want)
	}
	if r, err := st.Redirectors(pages[0].URL); err != nil || !slices.Equal(r, []string{"https://r.example/"}) {
		t.Errorf("Redirectors = %q, %v, want [https://r.example/]", r, err)
	}
	lr, err := s.Lookup([]string{pages[0].URL})
	if err != nil {
		t.Fatal(err)
	}
	res := mustIngest(t, s, client.Page{URL: "https://copy.example/x", Signature: pages[0].Signature})
	if res[0].Group != lr[0].Group {
		t.Errorf("copy after reopening: %+v, want in group %s", res[0], lr[0].Group)
	}

	// A crash after the journal was written and before the records were:
	// reopening replays the batch.
	m, err := st.Meta()
	if err != nil {
		t.Fatal(err)
	}
	m.NextGroup += 7
	b := &Batch{
		Pages:     map[string]*PageRecord{"https://j.example/": {Group: "gj", Popularity: 0.5, Verified: true}, "https://copy.example/x": nil},
		Groups:    map[string]*GroupRecord{"gj": {Winner: "https://j.example/", Members: []string{"https://j.example/"}}},
		Redirects: map[Redirect]bool{{"https://j.example/", "https://jr.example/"}: true, {pages[0].URL, "https://r.example/"}: false},
		Meta:      &m,
	}
	if err := st.c.Set(context.Background(), redisJournal, encodeBatch(b), 0).Err(); err != nil {
		t.Fatal(err)
	}
	st2, err := OpenRedis(addrs, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if g, ok, err := st2.Group("gj"); err != nil || !ok || g.Winner != "https://j.example/" {
		t.Errorf("Group(gj) after replay = %+v, %v, %v, want winner https://j.example/", g, ok, err)
	}
	if _, ok, err := st2.Page("https://copy.example/x"); err != nil || ok {
		t.Errorf("Page(copy) after replay = %v, %v, want deleted", ok, err)
	}
	if r, _ := st2.Redirectors(pages[0].URL); len(r) != 0 {
		t.Errorf("Redirectors after replay = %q, want none", r)
	}
	if got, err := st2.Meta(); err != nil || got.NextGroup != m.NextGroup || !slices.Equal(got.Partitioner, m.Partitioner) {
		t.Errorf("Meta after replay = %d, %v, want NextGroup %d", got.NextGroup, err, m.NextGroup)
	}
	if n, err := st2.c.Exists(context.Background(), redisJournal).Result(); err != nil || n != 0 {
		t.Errorf("journal after replay: %d keys, %v, want none", n, err)
	}
}

// TestRedisReplicas runs two services on one Redis Cluster, ingesting
// concurrently: replica A the LLVM sample, replica B a mirror of each
// sample page (the same signature under another URL, some more popular
// so that winners change hands across replicas). Every mirror must end in
// its original's group, and the groups, group IDs and winners must be
// those of a single service that ingests the batches in the order the
// writer lease granted them.
func TestRedisReplicas(t *testing.T) {
	addrs := redisCluster(t)
	open := func() (*RedisStore, *Service) {
		st, err := OpenRedis(addrs, RedisOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s, err := New(st, Options{SampleSize: 20, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return st, s
	}
	stA, a := open()
	stB, b := open()

	var originals, mirrors []client.Page
	var urls []string
	for i, p := range signedSample(t) {
		m := client.Page{URL: fmt.Sprintf("https://mirror.example/%d", i), Signature: p.sig, Popularity: float64(i%3) / 4}
		originals = append(originals, client.Page{URL: p.url, Signature: p.sig, Popularity: 0.25})
		mirrors = append(mirrors, m)
		urls = append(urls, p.url, m.URL)
	}
	type applied struct {
		seq   uint64
		pages []client.Page
	}
	ingest := func(st *RedisStore, s *Service, pages []client.Page, out chan<- applied, errs chan<- error) {
		for start := 0; start < len(pages); start += 3 {
			batch := pages[start:min(start+3, len(pages))]
			if _, err := s.Ingest(batch); err != nil {
				errs <- err
				return
			}
			// Ingest holds the lease until Apply's log entry is written, and
			// this goroutine is the replica's only writer.
			out <- applied{st.applied(), batch}
		}
		errs <- nil
	}
	out := make(chan applied, len(urls))
	errs := make(chan error, 2)
	go ingest(stA, a, originals, out, errs)
	go ingest(stB, b, mirrors, out, errs)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(out)
	var order []applied
	for ap := range out {
		order = append(order, ap)
	}
	slices.SortFunc(order, func(x, y applied) int { return cmp.Compare(x.seq, y.seq) })
	for i, ap := range order {
		if ap.seq != uint64(i+1) {
			t.Fatalf("batch %d has log position %d: the lease let two batches overlap", i+1, ap.seq)
		}
	}

	single := newTestService(t, Options{SampleSize: 20})
	for _, ap := range order {
		mustIngest(t, single, ap.pages...)
	}
	want := stateOf(t, single, urls)
	for name, s := range map[string]*Service{"A": a, "B": b} {
		if got := stateOf(t, s, urls); !slices.Equal(got, want) {
			t.Errorf("replica %s: pages = %q\nwant (one service) %q", name, got, want)
		}
	}
	res, err := a.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(res); i += 2 {
		if res[i].Group == "" || res[i].Group != res[i+1].Group {
			t.Errorf("%s in group %q, its mirror %s in %q", res[i].URL, res[i].Group, res[i+1].URL, res[i+1].Group)
		}
	}

	// A third replica started now loads the same state, and its next
	// ingest sees the groups; so does B after A wrote more.
	_, c := open()
	if got := stateOf(t, c, urls); !slices.Equal(got, want) {
		t.Errorf("new replica: pages = %q, want %q", got, want)
	}
	copyA := mustIngest(t, a, client.Page{URL: "https://copy.example/a", Signature: originals[0].Signature})
	copyB := mustIngest(t, b, client.Page{URL: "https://copy.example/b", Signature: originals[0].Signature})
	if copyA[0].Group != res[0].Group || copyB[0].Group != res[0].Group {
		t.Errorf("copies joined %q (A) and %q (B), want %q", copyA[0].Group, copyB[0].Group, res[0].Group)
	}
	if sa, sb := a.Stats().Groups, b.Stats().Groups; sa != sb {
		t.Errorf("candidate tables hold %d groups on A, %d on B", sa, sb)
	}
}

// stateOf returns, for each of urls, "URL group winner verified" as a
// service reports it.
func stateOf(t *testing.T, s *Service, urls []string) []string {
	t.Helper()
	res, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = fmt.Sprintf("%s %s %s %d", r.URL, r.Group, r.Winner, r.Size)
	}
	return out
}

// TestRedisFencing: a writer whose lease another replica took (it
// expired) writes nothing; the new holder replays its journal.
func TestRedisFencing(t *testing.T) {
	addrs := redisCluster(t)
	ctx := context.Background()
	stale, err := OpenRedis(addrs, RedisOptions{LeaseTTL: time.Millisecond, LeaseRenew: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	fresh, err := OpenRedis(addrs, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := stale.lease(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// The stale lease expires; the fresh writer takes the lease and writes.
	waitFor(t, func() bool { n, _ := stale.c.Exists(ctx, redisLease).Result(); return n == 0 })
	if _, err := fresh.lease(ctx, 0); err != nil {
		t.Fatal(err)
	}
	page := "https://fenced.example/"
	if err := fresh.Apply(&Batch{Pages: map[string]*PageRecord{page: {Group: "g1", Popularity: 1}}}); err != nil {
		t.Fatal(err)
	}
	// The stale writer's journal, records and log entry are all refused.
	if err := stale.Apply(&Batch{Pages: map[string]*PageRecord{page: {Group: "g2"}}}); !errors.Is(err, ErrFenced) {
		t.Errorf("stale Apply = %v, want ErrFenced", err)
	}
	if err := stale.write(ctx, &Batch{Pages: map[string]*PageRecord{page: nil}}); !errors.Is(err, ErrFenced) {
		t.Errorf("stale write = %v, want ErrFenced", err)
	}
	if p, ok, err := fresh.Page(page); err != nil || !ok || p.Group != "g1" {
		t.Errorf("Page after the stale writes = %+v, %v, %v, want group g1", p, ok, err)
	}
	// A journal that a holder left is replayed by the next one.
	if err := fresh.c.Set(ctx, redisJournal, encodeBatch(&Batch{Pages: map[string]*PageRecord{page: {Group: "g3"}}, Touched: []string{"g3"}}), 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.release(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := OpenRedis(addrs, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	ch, err := next.lease(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer next.release(ctx)
	if !slices.Equal(ch.touched, []string{"g3"}) || ch.seq != 2 {
		t.Errorf("changes after the replay = %+v, want g3 at log position 2", ch)
	}
	if p, _, _ := next.Page(page); p.Group != "g3" {
		t.Errorf("Page after the replay in group %q, want g3", p.Group)
	}
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

// TestRedisLeaseRenewal: a replica holding the lease past its TTL keeps
// it while it renews: another replica cannot take it, and the holder's
// writes are not fenced; released, the lease goes to the other.
func TestRedisLeaseRenewal(t *testing.T) {
	addrs := redisCluster(t)
	ctx := context.Background()
	o := RedisOptions{LeaseTTL: 2 * time.Second, LeaseRenew: 100 * time.Millisecond, LeaseWait: time.Millisecond}
	holder, err := OpenRedis(addrs, o)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	other, err := OpenRedis(addrs, o)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := holder.lease(ctx, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // past the TTL: only renewal keeps the lease
	if _, err := other.lease(ctx, 0); !errors.Is(err, ErrLeaseTimeout) {
		t.Fatalf("other replica's lease = %v, want ErrLeaseTimeout while the holder renews", err)
	}
	page := "https://renewed.example/"
	if err := holder.Apply(&Batch{Pages: map[string]*PageRecord{page: {Group: "g1", Popularity: 1}}}); err != nil {
		t.Fatalf("holder's Apply after the TTL = %v, want the lease still held", err)
	}
	if err := holder.release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.lease(ctx, 0); err != nil {
		t.Fatalf("lease after release = %v", err)
	}
	if err := other.release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRedis(addrs, RedisOptions{LeaseTTL: time.Second, LeaseRenew: time.Second}); err == nil {
		t.Error("OpenRedis took a renewal interval equal to the TTL")
	}
}

// TestRedisMetricsWhileWaiting: while an ingest waits for the writer
// lease that another replica holds, /metrics and /healthz of the waiting
// replica still answer (a scrape must not time out exactly when the
// replicas contend).
func TestRedisMetricsWhileWaiting(t *testing.T) {
	addrs := redisCluster(t)
	holder, err := OpenRedis(addrs, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	st, err := OpenRedis(addrs, RedisOptions{LeaseWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(st, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ctx := context.Background()
	if _, err := holder.lease(ctx, 0); err != nil {
		t.Fatal(err)
	}
	ingested := make(chan error, 1)
	go func() {
		_, err := s.Ingest([]client.Page{{URL: "https://waiting.example/", Signature: signedSample(t)[0].sig}})
		ingested <- err
	}()
	// The ingest is waiting for the lease once the service's mutex is
	// taken; /metrics must not wait for it.
	waitFor(t, func() bool {
		if s.mu.TryLock() {
			s.mu.Unlock()
			return false
		}
		return true
	})
	hc := &http.Client{Timeout: 20 * time.Second}
	for _, path := range []string{"/metrics", "/healthz"} {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Errorf("GET %s while an ingest waits for the lease: %v", path, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s while an ingest waits for the lease: %d", path, resp.StatusCode)
		}
	}
	select {
	case err := <-ingested:
		t.Fatalf("the ingest returned while another replica held the lease: %v", err)
	default:
	}
	if err := holder.release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ingested; err != nil {
		t.Errorf("ingest after the lease was released: %v", err)
	}
}
