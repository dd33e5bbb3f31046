package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeResolver answers from a map; names not in it fail. It never touches
// the network.
type fakeResolver map[string][]netip.Addr

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func newTestClient(t testing.TB, o Options) *Client {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestGuardHosts runs the URL host check (parse + guard) on every spelling;
// nothing is dialed.
func TestGuardHosts(t *testing.T) {
	c := newTestClient(t, Options{})
	tests := []struct {
		host    string
		blocked bool
	}{
		// loopback in every spelling browsers and inet_aton accept
		{"127.0.0.1", true},
		{"127.0.0.1.", true},
		{"127.255.255.254", true},
		{"2130706433", true},
		{"017700000001", true},
		{"0177.0.0.1", true},
		{"0x7f.0.0.1", true},
		{"0x7f.1", true},
		{"0X7F.0x00.0.0x1", true},
		{"127.1", true},
		{"127.0.1", true},
		{"0x7f000001", true},
		{"[::1]", true},
		{"[0:0:0:0:0:0:0:1]", true},
		{"[::ffff:127.0.0.1]", true},
		{"[::ffff:7f00:1]", true},
		{"[::127.0.0.1]", true},
		{"[::ffff:0:127.0.0.1]", true},
		// unspecified, this network, broadcast
		{"0.0.0.0", true},
		{"0", true},
		{"0.1.2.3", true},
		{"[::]", true},
		{"255.255.255.255", true},
		{"4294967295", true},
		// private, CGNAT, link-local, metadata
		{"10.0.0.1", true},
		{"012.0.0.1", true},
		{"167772161", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"0xc0.0xa8.1.1", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.100.100.200", true},
		{"169.254.169.254", true},
		{"169.254.170.2", true},
		{"2852039166", true},
		{"0xa9.0xfe.0xa9.0xfe", true},
		{"[::ffff:169.254.169.254]", true},
		{"[fd00:ec2::254]", true},
		{"[fc00::1]", true},
		{"[fdff::1]", true},
		{"[fe80::1]", true},
		{"[fec0::1]", true},
		// multicast, reserved, special purpose, documentation, benchmarking
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"[ff02::1]", true},
		{"240.0.0.1", true},
		{"192.0.0.8", true},
		{"192.0.2.1", true},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"192.88.99.1", true},
		{"[2001:db8::1]", true},
		{"[3fff::1]", true},
		{"[2001:2::1]", true},
		{"[100::1]", true},
		{"[5f00::1]", true},
		// translation and tunnel forms embedding a refused IPv4 address
		{"[64:ff9b::10.0.0.1]", true},
		{"[64:ff9b::7f00:1]", true},
		{"[64:ff9b::a9fe:a9fe]", true},
		{"[64:ff9b:1::8.8.8.8]", true},
		{"[2002:0a00:0001::1]", true},
		{"[2002:7f00:1::]", true},
		{"[2002:a9fe:a9fe::]", true},
		{"[2001:0:7f00:1::1]", true},               // Teredo server 127.0.0.1
		{"[2001:0:5db8:d822:0:0:f5ff:fffe]", true}, // Teredo client ~f5fffffe = 10.0.0.1
		{"[2001:0:5db8:d822:0:0:3fff:fffe]", true}, // Teredo client ~3ffffffe = 192.0.0.1
		{"[::ffff:10.0.0.1]", true},
		{"[fe80::1%25eth0]", true},
		// public addresses pass
		{"93.184.216.34", false},
		{"1.1.1.1", false},
		{"8.8.8.8", false},
		{"1572395042", false}, // 93.184.216.34
		{"0x5d.0xb8.0xd8.0x22", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"172.15.255.255", false},
		{"172.32.0.0", false},
		{"198.20.0.1", false},
		{"[2606:4700::1111]", false},
		{"[2001:4860:4860::8888]", false},
		{"[::ffff:93.184.216.34]", false},
		{"[64:ff9b::93.184.216.34]", false},
		{"[2002:5db8:d822::1]", false},
		{"[2001:0:5db8:d822::a247:27dd]", false}, // Teredo, both ends public
		{"example.com", false},                   // names are checked after resolution
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			u, err := url.Parse("http://" + tt.host + "/")
			if err != nil {
				t.Fatalf("url.Parse: %v", err)
			}
			_, err = c.parseTarget(u)
			if got := errors.Is(err, ErrBlocked); got != tt.blocked {
				t.Errorf("parseTarget(%q) error = %v, want blocked %v", tt.host, err, tt.blocked)
			}
		})
	}
}

// TestGuardTeredoClient checks the Teredo client decoding itself: the
// client address is stored inverted (RFC 4380 §4).
func TestGuardTeredoClient(t *testing.T) {
	// ^0xf5fffffe = 0x0a000001 = 10.0.0.1
	a := netip.MustParseAddr("2001:0:5db8:d822:0:0:f5ff:fffe")
	if r := reason(a); r != "Teredo client embedding private (RFC 1918)" {
		t.Errorf("reason(%v) = %q, want Teredo client embedding private", a, r)
	}
}

func TestParseIPv4(t *testing.T) {
	tests := []struct {
		in     string
		want   string // "" with isIP: malformed
		isIP   bool
		wantOK bool
	}{
		{"127.0.0.1", "127.0.0.1", true, true},
		{"2130706433", "127.0.0.1", true, true},
		{"0177.0.0.1", "127.0.0.1", true, true},
		{"0x7f.1", "127.0.0.1", true, true},
		{"127.1", "127.0.0.1", true, true},
		{"1.2.3", "1.2.0.3", true, true},
		{"1.2.3.4.", "1.2.3.4", true, true},
		{"0x", "0.0.0.0", true, true},
		{"1.2.3.4.5", "", true, false},
		{"256.0.0.1", "", true, false},
		{"1.2.3.256", "", true, false},
		{"1.2.65536", "", true, false},
		{"4294967296", "", true, false},
		{"08.0.0.1", "", true, false},
		{"99999999999999999999999999", "", true, false},
		{"example.123", "", true, false},
		{"example.com", "", false, true},
		{"1.2.3.com", "", false, true},
		{"0x7g", "", false, true},
		{"localhost", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			a, isIP, err := parseIPv4(tt.in)
			if isIP != tt.isIP || (err == nil) != tt.wantOK {
				t.Fatalf("parseIPv4(%q) = %v, %v, %v; want isIP %v, ok %v", tt.in, a, isIP, err, tt.isIP, tt.wantOK)
			}
			if tt.want != "" && a.String() != tt.want {
				t.Errorf("parseIPv4(%q) = %v, want %v", tt.in, a, tt.want)
			}
		})
	}
}

func TestGuardSchemes(t *testing.T) {
	c := newTestClient(t, Options{})
	for _, raw := range []string{"file:///etc/passwd", "ftp://93.184.216.34/", "gopher://example.com/", "javascript:alert(1)", "data:text/html,x"} {
		_, err := c.Get(context.Background(), raw, Validators{})
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("Get(%q) error = %v, want ErrBlocked", raw, err)
		}
	}
}

// TestGuardNames checks resolved names with a fake resolver: every address
// is checked, one refused address refuses the name.
func TestGuardNames(t *testing.T) {
	r := fakeResolver{
		"public.test":   addrs("93.184.216.34", "2606:4700::1111"),
		"mixed.test":    addrs("93.184.216.34", "10.0.0.1"),
		"meta.test":     addrs("169.254.169.254"),
		"mapped.test":   addrs("::ffff:127.0.0.1"),
		"nat64.test":    addrs("64:ff9b::c0a8:0101"),
		"loopback.test": addrs("::1"),
		"allowed.test":  addrs("127.0.0.1"),
	}
	c := newTestClient(t, Options{Resolver: r, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	strict := newTestClient(t, Options{Resolver: r})
	tests := []struct {
		c       *Client
		host    string
		blocked bool
	}{
		{strict, "public.test", false},
		{strict, "mixed.test", true},
		{strict, "meta.test", true},
		{strict, "mapped.test", true},
		{strict, "nat64.test", true},
		{strict, "loopback.test", true},
		{strict, "allowed.test", true},
		{c, "allowed.test", false},
		{c, "mapped.test", false}, // unmapped before the allowlist
		{c, "meta.test", true},
		{strict, "2130706433", true},
		{strict, "0x7f.1", true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			_, err := tt.c.lookup(context.Background(), tt.host)
			if got := errors.Is(err, ErrBlocked); got != tt.blocked {
				t.Errorf("lookup(%q) error = %v, want blocked %v", tt.host, err, tt.blocked)
			}
		})
	}
}

func TestGuardAllowPrivate(t *testing.T) {
	c := newTestClient(t, Options{AllowPrivate: true})
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "fd00:ec2::254"} {
		if err := c.guard.check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("check(%s) with AllowPrivate = %v, want nil", s, err)
		}
	}
}

func BenchmarkGuardCheck(b *testing.B) {
	g := guard{}
	as := addrs("93.184.216.34", "10.0.0.1", "2606:4700::1111", "64:ff9b::a00:1")
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range as {
			_ = g.check(a)
		}
	}
}

// TestGuardBadPorts listens on a port of the Fetch standard's bad-port
// list (10080, Amanda backup, else another unprivileged one, so the test
// can bind it) on loopback, an allowed network: browsers refuse these
// ports (ERR_UNSAFE_PORT), because a request there speaks HTTP to another
// protocol's server, so no search result on one is a page a reader can
// open. The guard refuses the port directly and as a redirect target, and
// nothing connects to the listener.
func TestGuardBadPorts(t *testing.T) {
	var ln net.Listener
	for _, port := range []string{"10080", "6665", "6666", "6667", "6668", "6669", "6679", "6697", "6000", "5060"} {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:"+port); err == nil {
			break
		}
	}
	if ln == nil {
		t.Skip("no unprivileged bad port free on loopback")
	}
	defer ln.Close()
	bad := "http://" + ln.Addr().String() + "/"
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, bad, http.StatusFound)
	})
	c := newTestClient(t, Options{Allow: loopback})
	for _, raw := range []string{bad, "https" + strings.TrimPrefix(bad, "http"), srv.URL} {
		if _, err := c.Get(context.Background(), raw, Validators{}); !errors.Is(err, ErrBadPort) || !errors.Is(err, ErrBlocked) {
			t.Errorf("Get(%s) error = %v, want ErrBadPort (an ErrBlocked)", raw, err)
		}
	}
	for _, port := range []string{"25", "6379", "6665", "5060"} {
		u, _ := url.Parse("http://93.184.216.34:" + port + "/")
		_, err := c.parseTarget(u)
		if blocked := port != "6379"; errors.Is(err, ErrBlocked) != blocked { // Redis's port is no bad port
			t.Errorf("parseTarget(%s) error = %v, want blocked %v", u, err, blocked)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections reached the bad port, want none", n)
	}
}
