package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
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
	var addrs []string
	for i := range 3 {
		port := freePort(t)
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--dir", dir, "--save", "", "--appendonly", "no", "--protected-mode", "no")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	for _, a := range addrs {
		waitRedis(t, a, "PING", "PONG")
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, a := range addrs {
		waitRedis(t, a, "CLUSTER INFO", "cluster_state:ok")
	}
	return addrs
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
	st, err := OpenRedis(addrs)
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
	st, err = OpenRedis(addrs)
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
	st2, err := OpenRedis(addrs)
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
