package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/winnow-search/winnow/canon"
)

// guard is the SSRF guard: it decides whether an address may be dialed.
// It is immutable after construction and safe for concurrent use.
type guard struct {
	allow        []netip.Prefix
	allowPrivate bool
}

// namedPrefix is a refused network and why it is refused.
type namedPrefix struct {
	p      netip.Prefix
	reason string
}

// metadataAddrs are cloud instance metadata endpoints, reported by name.
// They also lie inside refused ranges; the list only sharpens the reason.
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "cloud metadata (AWS, GCP, Azure, OpenStack)",
	netip.MustParseAddr("169.254.170.2"):   "cloud metadata (AWS ECS)",
	netip.MustParseAddr("100.100.100.200"): "cloud metadata (Alibaba)",
	netip.MustParseAddr("192.0.0.192"):     "cloud metadata (Oracle)",
	netip.MustParseAddr("fd00:ec2::254"):   "cloud metadata (AWS IPv6)",
}

// refusedV4 lists the IPv4 special-purpose ranges of the IANA registry
// (RFC 6890 and successors) that are not globally reachable, plus the
// deprecated 6to4 relay anycast. Order matters only for the reason given.
var refusedV4 = []namedPrefix{
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("0.0.0.0/8"), "this network (0.0.0.0/8)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
}

// refusedV6 lists IPv6 ranges refused inside 2000::/3 or with a sharper
// reason than "not global unicast". Ranges that embed an IPv4 address are
// handled in reasonV6.
var refusedV6 = []namedPrefix{
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking"},
	{netip.MustParsePrefix("2001:10::/28"), "ORCHID"},
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (private)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64Prefix   = netip.MustParsePrefix("64:ff9b::/96")
	siitPrefix    = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	teredoPrefix  = netip.MustParsePrefix("2001::/32")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// check returns nil when a may be dialed, else an error wrapping
// [ErrBlocked] that names the address and the refused range.
// Addresses inside an allowed prefix pass; IPv4-mapped IPv6 addresses are
// unmapped first, so ::ffff:127.0.0.1 is treated as 127.0.0.1.
func (g *guard) check(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	if a.Zone() != "" {
		return fmt.Errorf("%w: %v is a scoped address", ErrBlocked, a)
	}
	u := a.Unmap()
	for _, p := range g.allow {
		if p.Contains(u) || p.Contains(a) {
			return nil
		}
	}
	if g.allowPrivate {
		return nil
	}
	if r := reason(u); r != "" {
		return fmt.Errorf("%w: %v is %s", ErrBlocked, a, r)
	}
	return nil
}

// reason says why a (already unmapped) is refused, or "" when it is a
// public unicast address.
func reason(a netip.Addr) string {
	if r, ok := metadataAddrs[a]; ok {
		return r
	}
	if a.Is4() {
		return reasonV4(a)
	}
	return reasonV6(a)
}

func reasonV4(a netip.Addr) string {
	for _, np := range refusedV4 {
		if np.p.Contains(a) {
			return np.reason
		}
	}
	return ""
}

// reasonV6 refuses the special ranges and everything outside global
// unicast 2000::/3; for translation and tunnel ranges (NAT64 64:ff9b::/96,
// SIIT ::ffff:0:0:0/96, 6to4 2002::/16, Teredo 2001::/32) it checks the
// embedded IPv4 addresses, so 64:ff9b::10.0.0.1 is refused as private.
func reasonV6(a netip.Addr) string {
	b := a.As16()
	embedded := func(kind string, v4 [4]byte) string {
		if r := reason(netip.AddrFrom4(v4)); r != "" {
			return kind + " embedding " + r
		}
		return ""
	}
	switch {
	case nat64Prefix.Contains(a):
		return embedded("NAT64", [4]byte(b[12:16]))
	case siitPrefix.Contains(a):
		return embedded("IPv4-translated", [4]byte(b[12:16]))
	case sixToFour.Contains(a):
		return embedded("6to4", [4]byte(b[2:6]))
	case teredoPrefix.Contains(a):
		// RFC 4380 §4: server IPv4 in bits 32-63, client IPv4 inverted in
		// the last 32 bits.
		if r := embedded("Teredo server", [4]byte(b[4:8])); r != "" {
			return r
		}
		return embedded("Teredo client", [4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	}
	for _, np := range refusedV6 {
		if np.p.Contains(a) {
			return np.reason
		}
	}
	if !globalUnicast.Contains(a) {
		return "not global unicast"
	}
	return ""
}

// badPorts are the Fetch standard's bad ports (fetch.spec.whatwg.org
// #port-blocking), which browsers refuse (ERR_UNSAFE_PORT): HTTP sent there
// speaks to another protocol's server (SMTP, IRC, SIP, NFS, ...), the
// cross-protocol requests NAT slipstreaming used, and no result page on
// them is one a reader's browser opens. Refused whatever the network, as
// schemes are.
var badPorts = func() map[uint16]bool {
	m := map[uint16]bool{}
	for _, p := range []uint16{1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69,
		77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119,
		123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
		526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990,
		993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000,
		6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080} {
		m[p] = true
	}
	return m
}()

// parseIPv4 parses host the way browsers (WHATWG URL "IPv4 parser") and
// libc inet_aton do: one to four parts separated by dots, each decimal,
// octal (leading 0) or hexadecimal (leading 0x), the last part filling the
// remaining bytes, so "2130706433", "0177.0.0.1", "0x7f.1" and "127.1" are
// all 127.0.0.1. ok reports whether host is meant as an IPv4 address at all
// (its last part is a number); err is set when it is, but is malformed.
func parseIPv4(host string) (a netip.Addr, ok bool, err error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last == "" {
		return netip.Addr{}, false, nil
	}
	if _, lerr := ipv4Number(last); lerr != nil && !allDigits(last) {
		return netip.Addr{}, false, nil
	}
	// Made only for a malformed address: every fetch of a URL with a
	// literal address parses it.
	bad := func() error { return fmt.Errorf("fetch: malformed IPv4 address %q", host) }
	if len(parts) > 4 {
		return netip.Addr{}, true, bad()
	}
	var nums [4]uint64
	for i, p := range parts {
		n, err := ipv4Number(p)
		if err != nil {
			return netip.Addr{}, true, bad()
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(parts)-1] {
		if n > 255 {
			return netip.Addr{}, true, bad()
		}
		v |= n << (8 * (3 - i))
	}
	lastN := nums[len(parts)-1]
	if lastN >= 1<<(8*(5-len(parts))) {
		return netip.Addr{}, true, bad()
	}
	v |= lastN
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// ipv4Number parses one part of an IPv4 address: 0x hex, leading-0 octal or
// decimal. Values above 2^32 are errors (no overflow).
func ipv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty part")
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if len(s) > 32 {
		return 0, errors.New("part too long")
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil || n > 1<<32 {
		return 0, errors.New("bad part")
	}
	// strconv accepts underscores only with base 0, and signs never for
	// ParseUint, so s held digits of base only.
	return n, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// target is a parsed, normalized URL to fetch.
type target struct {
	u    *url.URL
	host string     // lower case ASCII host name or canonical IP, no brackets
	ip   netip.Addr // valid when the URL names an IP address
}

// parseTarget checks the scheme (http and https only), drops user info and
// fragment, converts the host to ASCII (IDNA) and rewrites IP addresses in
// any spelling to their canonical form, then checks an IP host against the
// guard. Host names are checked at dial time, after resolution.
func (c *Client) parseTarget(u *url.URL) (target, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return target{}, fmt.Errorf("%w: scheme %q is not http or https", ErrBlocked, u.Scheme)
	}
	u.Scheme = scheme
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return target{}, fmt.Errorf("fetch: URL %q has no host", u.Redacted())
	}
	if port != "" {
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil || p == 0 {
			return target{}, fmt.Errorf("fetch: bad port %q", port)
		}
		if badPorts[uint16(p)] {
			return target{}, fmt.Errorf("%w: %d is another protocol's (the Fetch standard's bad ports)", ErrBadPort, p)
		}
	}
	var t target
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return target{}, fmt.Errorf("fetch: malformed IPv6 address %q", host)
		}
		t.ip = a
	} else {
		h := strings.ToLower(host)
		if !isASCII(h) { // ASCII names pass as they are: underscores occur in the wild
			// As browsers and canon.URL convert it: idna.Lookup's STD3
			// rules refused an underscore label next to a non-ASCII one.
			var err error
			if h, err = canon.DomainToASCII(h); err != nil {
				return target{}, fmt.Errorf("fetch: bad host name %q: %v", host, err)
			}
		}
		a, isIP, err := parseIPv4(h)
		if err != nil {
			return target{}, err
		}
		if isIP {
			t.ip = a
		} else {
			t.host = h
		}
	}
	if t.ip.IsValid() {
		if err := c.guard.check(t.ip); err != nil {
			return target{}, err
		}
		t.host = t.ip.String()
	}
	h := t.host
	if t.ip.Is6() {
		h = "[" + h + "]"
	}
	if port != "" {
		h += ":" + port
	}
	u.Host = h
	t.u = u
	return t, nil
}

// lookup resolves host (a name, or an IP address in any spelling) and checks
// every address with the guard: one refused address refuses the host, so
// a name cannot smuggle an internal address next to a public one.
func (c *Client) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if a, isIP, err := parseIPv4(strings.ToLower(host)); isIP {
		if err != nil {
			return nil, err
		}
		addrs = []netip.Addr{a}
	} else {
		addrs, err = c.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("fetch: resolving %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("fetch: resolving %s: no addresses", host)
		}
	}
	for _, a := range addrs {
		if err := c.guard.check(a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// dial is the fasthttp dial function: it resolves the host once, checks
// every address and dials the checked addresses themselves, never the name
// again, so DNS rebinding between check and connect is impossible.
func (c *Client) dial(addr string, timeout time.Duration) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("fetch: bad dial address %q: %v", addr, err)
	}
	if timeout <= 0 || timeout > c.opt.Timeout {
		timeout = c.opt.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	addrs, err := c.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var firstErr error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}
