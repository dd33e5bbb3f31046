package canon

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Errors returned by [URL].
var (
	ErrScheme = errors.New("canon: URL scheme is not http or https")
	ErrHost   = errors.New("canon: URL has an empty or invalid host")
)

// trackingParams are query parameters that only track the visitor.
var trackingParams = map[string]bool{
	"gclid": true, "gclsrc": true, "dclid": true, "gbraid": true, "wbraid": true,
	"fbclid": true, "msclkid": true, "yclid": true, "twclid": true, "ttclid": true,
	"li_fat_id": true, "igshid": true, "mc_cid": true, "mc_eid": true,
	"_ga": true, "_gl": true, "_hsenc": true, "_hsmi": true, "__hstc": true,
	"__hssc": true, "__hsfp": true, "hsctatracking": true, "mkt_tok": true,
	"ref_src": true, "ref_url": true, "oly_anon_id": true, "oly_enc_id": true,
	"_openstat": true, "vero_id": true, "vero_conv": true, "wickedid": true,
	"rb_clickid": true, "s_cid": true, "ncid": true, "spm": true, "srsltid": true,
}

// tracking reports whether the query key (percent-decoded) is a tracking
// parameter: utm_* or one of trackingParams, compared in lower case.
func tracking(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "utm_") || trackingParams[k]
}

// URL returns the canonical form of the http or https URL raw, a key
// under which two spellings of one page meet and two pages never do. It
// parses raw as the WHATWG URL Standard does for http and https URLs (the
// web-platform-tests' urltestdata.json checks it, see url_whatwg_test.go),
// then normalizes:
//
//	| part     | WHATWG parse (kept)                               | winnow's normalization (documented choice)                          |
//	|----------|---------------------------------------------------|---------------------------------------------------------------------|
//	| input    | leading/trailing C0 controls and spaces trimmed;   |                                                                     |
//	|          | tabs, CR and LF removed anywhere; "\" is "/"       |                                                                     |
//	|          | before the query; any number of slashes after      |                                                                     |
//	|          | "http:"                                            |                                                                     |
//	| scheme   | lower case; only http and https (else ErrScheme)   |                                                                     |
//	| userinfo | parsed                                             | dropped (not part of the page's identity)                           |
//	| host     | percent-decoded, IDNA (UTS 46, non-transitional),  | trailing dots removed; a host with an empty label is ErrHost        |
//	|          | lower case; IPv4 in every number form              |                                                                     |
//	|          | ("2130706433", "0x7f.1", "0177.0.0.1") as          |                                                                     |
//	|          | dotted decimal; IPv6 compressed                    |                                                                     |
//	| port     | digits; default port removed                       |                                                                     |
//	| path     | kept byte for byte: "%2F" stays "%2F", non-ASCII   | escapes of unreserved characters decoded, other escapes upper-case; |
//	|          | is UTF-8 percent-encoded; dot segments ("." "..",  | ";jsessionid=..." path parameters removed                           |
//	|          | "%2e") resolved; empty path "/"                    |                                                                     |
//	| query    | kept                                               | "+", "%20" and a space all "+" (form encoding: one meaning); empty  |
//	|          |                                                    | and tracking parameters (utm_*, gclid, fbclid, ...) and session     |
//	|          |                                                    | IDs (jsessionid, phpsessid, aspsessionid*, sessionid, session_id,   |
//	|          |                                                    | sid when its value is a token) removed; the rest sorted by key,     |
//	|          |                                                    | stably; an empty query loses its "?"                                |
//	| fragment | kept                                               | dropped, but for a hash-bang ("#!/products/1"): a page of its own   |
//
// Duplicate and trailing slashes and index pages ("/index.html") are kept,
// since servers may treat them differently.
//
// URL returns an error wrapping [ErrScheme] for other schemes and
// [ErrHost] for an empty host or one that fails IDNA or IPv4 parsing, and
// an error for a bad port. URL(URL(x)) == URL(x) whenever URL(x)
// succeeds.
func URL(raw string) (string, error) {
	s := preprocess(raw)
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) {
		return "", fmt.Errorf("%w: no scheme in %q", ErrScheme, clip(s))
	}
	scheme := strings.ToLower(s[:colon])
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%w: %q", ErrScheme, s[:colon])
	}
	rest := strings.TrimLeft(s[colon+1:], "/\\")
	end := strings.IndexAny(rest, "/\\?#")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	hostPart, port, err := splitHostPort(authority)
	if err != nil {
		return "", err
	}
	host, err := canonHost(hostPart)
	if err != nil {
		return "", err
	}
	var fragment string
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, fragment = rest[:i], rest[i+1:]
	}
	var query string
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query = rest[:i], rest[i+1:]
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return "", fmt.Errorf("canon: invalid port %q", clip(port))
		}
		if !(scheme == "http" && n == 80 || scheme == "https" && n == 443) {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(n, 10))
		}
	}
	path := removeDotSegments(dropSessionParams(escape(strings.ReplaceAll(rest, "\\", "/"), partPath)))
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	b.WriteString(path)
	if q := canonQuery(query); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	if strings.HasPrefix(fragment, "!") {
		b.WriteByte('#')
		b.WriteString(escape(fragment, partFragment))
	}
	return b.String(), nil
}

// TrimURL removes what the URL Standard removes from a URL before parsing
// it: leading and trailing C0 controls and spaces, and every tab, CR and
// LF, as browsers and [URL] do. A URL as an index stores it (the CR of a
// CRLF line, a copied tab) then parses with net/url, which refuses control
// characters.
func TrimURL(raw string) string { return preprocess(raw) }

// preprocess removes what the URL Standard removes before parsing: leading
// and trailing C0 controls and spaces, and every tab, CR and LF.
func preprocess(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// splitHostPort splits an authority without userinfo into host and port
// ("" if none); an IPv6 literal keeps its brackets.
func splitHostPort(a string) (host, port string, err error) {
	if strings.HasPrefix(a, "[") {
		i := strings.IndexByte(a, ']')
		if i < 0 {
			return "", "", fmt.Errorf("%w: unclosed IPv6 literal %q", ErrHost, clip(a))
		}
		host, a = a[:i+1], a[i+1:]
		if a == "" {
			return host, "", nil
		}
		if a[0] != ':' {
			return "", "", fmt.Errorf("%w: %q after an IPv6 literal", ErrHost, clip(a))
		}
		return host, a[1:], nil
	}
	host, port, _ = strings.Cut(a, ":")
	return host, port, nil
}

// dropSessionParams removes ";jsessionid=..." path parameters (Java
// servlet session IDs in the URL), which name a visitor, not a page.
func dropSessionParams(p string) string {
	for {
		i := indexFold(p, ";jsessionid=")
		if i < 0 {
			return p
		}
		j := i + 1
		for j < len(p) && p[j] != '/' && p[j] != ';' {
			j++
		}
		p = p[:i] + p[j:]
	}
}

// indexFold is strings.Index for an ASCII lower-case needle, ignoring case.
func indexFold(s, needle string) int {
	for i := 0; i+len(needle) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

// forbiddenDomain reports a forbidden domain code point of the URL
// Standard (C0 controls, space, # % / : < > ? @ [ \ ] ^ | and DEL).
func forbiddenDomain(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0
}

// hostProfile is the URL Standard's domain to ASCII: UTS 46 mapping,
// non-transitional, hyphens and DNS lengths unchecked, STD3 rules off
// (underscores pass), bidi and joiner rules on.
var hostProfile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false),
	idna.CheckHyphens(false), idna.VerifyDNSLength(false), idna.BidiRule(), idna.CheckJoiners(true))

// DomainToASCII converts a host name (no IP literal in brackets, no
// percent-encoding) to lower-case ASCII as the URL Standard's "domain to
// ASCII" does, which browsers follow: UTS 46 mapping, non-transitional,
// STD3 rules off (an underscore label passes: "my_host.bücher.example" is
// "my_host.xn--bcher-kva.example"), hyphens and DNS lengths unchecked,
// bidi and joiner rules on; then a result holding a forbidden domain code
// point (a mapped "／" is "/") is refused. Names of lower-case letters,
// digits, '-', '.' and '_' without an "xn--" label pass as they are.
func DomainToASCII(host string) (string, error) {
	h := strings.ToLower(host)
	if !plainHost(h) {
		var err error
		if h, err = hostProfile.ToASCII(h); err != nil {
			return "", err
		}
	}
	for i := 0; i < len(h); i++ {
		if forbiddenDomain(h[i]) {
			return "", fmt.Errorf("forbidden code point %q", h[i])
		}
	}
	return h, nil
}

// canonHost percent-decodes host, converts it to ASCII as the URL
// Standard does, parses IPv4 addresses in every number form and removes
// trailing dots. IPv6 literals come back in brackets, compressed.
func canonHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("%w: empty", ErrHost)
	}
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("%w: %q", ErrHost, clip(host))
		}
		return "[" + a.String() + "]", nil
	}
	h := host
	if strings.IndexByte(h, '%') >= 0 {
		d, err := url.PathUnescape(h)
		if err != nil {
			return "", fmt.Errorf("%w: %q", ErrHost, clip(host))
		}
		h = d
	}
	h, err := DomainToASCII(h)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrHost, clip(host), err)
	}
	if endsInNumber(h) {
		a, ok := parseIPv4(h)
		if !ok {
			return "", fmt.Errorf("%w: %q is no IPv4 address", ErrHost, clip(host))
		}
		return a, nil
	}
	// Trailing dots name the same host, but "foo.09.." stripped would end
	// in a number and parse as a (bad) IPv4 address: keep its dots.
	if t := strings.TrimRight(h, "."); t == h || !endsInNumber(t) {
		h = t
	}
	if h == "" || h[0] == '.' || strings.Contains(strings.TrimRight(h, "."), "..") {
		return "", fmt.Errorf("%w: %q", ErrHost, clip(host))
	}
	return h, nil
}

// endsInNumber is the URL Standard's "ends in a number" of a domain: its
// last label (before one trailing dot) is decimal digits or 0x and hex.
func endsInNumber(h string) bool {
	h = strings.TrimSuffix(h, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last) {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if _, ok := unhex(last[i]); !ok {
				return false
			}
		}
		return true
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseIPv4 is the URL Standard's IPv4 parser: one to four parts, each
// decimal, octal (leading 0) or hex (0x); the last part fills the bytes
// the others leave. It returns the dotted decimal form.
func parseIPv4(h string) (string, bool) {
	parts := strings.Split(h, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return "", false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums {
		if i < len(nums)-1 {
			if n > 255 {
				return "", false
			}
			v = v<<8 | n
			continue
		}
		if n >= 1<<(8*(5-len(nums))) {
			return "", false
		}
		v = v<<(8*(5-len(nums))) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), true
}

func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 1 << 40, true // too large: rejected by the caller
		}
		return 0, false
	}
	return n, true
}

// plainHost reports whether h is lower-case ASCII letters, digits, '-',
// '_' and '.', with no punycode label, so IDNA would not change it.
// Underscores, rejected by IDNA's STD3 rules, occur in real host names.
func plainHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return !strings.Contains(h, "xn--")
}

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// Parts of a URL that escape treats differently.
const (
	partPath = iota
	partKey
	partValue
	partFragment
)

// allowed reports whether c may appear unescaped in the given part.
func allowed(c byte, part int) bool {
	if unreserved(c) {
		return true
	}
	switch c {
	case '!', '$', '(', ')', '*', '+', ',', ';', ':', '@', '/':
		return true
	case '\'':
		// The URL Standard escapes it in the query of http(s) URLs.
		return part == partPath || part == partFragment
	case '=':
		return part != partKey
	case '&':
		return part == partPath
	case '?':
		return part != partPath
	case '#':
		return part == partFragment
	}
	return false
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

const upperHex = "0123456789ABCDEF"

// escape normalizes the percent-encoding of s.
func escape(s string, part int) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				d := hi<<4 | lo
				if unreserved(d) {
					b = append(b, d)
				} else {
					b = append(b, '%', upperHex[hi], upperHex[lo])
				}
				i += 2
				continue
			}
		}
		if allowed(c, part) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	return string(b)
}

// removeDotSegments resolves "." and ".." segments (RFC 3986 §5.2.4).
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// canonQuery normalizes, filters and sorts the raw query q.
func canonQuery(q string) string {
	if q == "" {
		return ""
	}
	type param struct{ key, kv string }
	var ps []param
	for kv := range strings.SplitSeq(q, "&") {
		if kv == "" {
			continue
		}
		k, v, hasEq := strings.Cut(kv, "=")
		k = formSpaces(escape(k, partKey))
		if k == "" && (!hasEq || v == "") {
			continue
		}
		v = formSpaces(escape(v, partValue))
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		if tracking(dk) || tracking(k) || session(dk, v) {
			continue
		}
		s := k
		if hasEq {
			s += "=" + v
		}
		ps = append(ps, param{k, s})
	}
	slices.SortStableFunc(ps, func(a, b param) int { return strings.Compare(a.key, b.key) })
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.kv)
	}
	return b.String()
}

// formSpaces writes a space as "+" in an escaped query part: "+", "%20"
// and a raw space all mean a space to a server that reads the query as a
// form (application/x-www-form-urlencoded), which is every common one.
func formSpaces(s string) string { return strings.ReplaceAll(s, "%20", "+") }

// sessionParams are query keys (lower case) that carry a visitor's
// session: Java servlets, PHP, and common frameworks.
var sessionParams = map[string]bool{"jsessionid": true, "phpsessid": true, "sessionid": true, "session_id": true}

// session reports whether a query parameter (key percent-decoded, value
// escaped) is a session ID: a key of sessionParams, ASP's
// "ASPSESSIONID…", or "sid" whose value is a token (16 or more letters
// and digits with both in it, as session IDs are; a short sid such as
// "sid=3" may name a page).
func session(key, value string) bool {
	k := strings.ToLower(key)
	switch {
	case sessionParams[k], strings.HasPrefix(k, "aspsessionid"):
		return true
	case k == "sid":
		return token(value)
	}
	return false
}

// token reports whether v looks like a random session token.
func token(v string) bool {
	if len(v) < 16 {
		return false
	}
	letter, digit := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return letter && digit
}

// aliasLabels are leading host labels that name the same site.
var aliasLabels = map[string]bool{
	"www": true, "www1": true, "www2": true, "www3": true, "www4": true, "www5": true,
	"www6": true, "www7": true, "www8": true, "www9": true, "m": true, "mobile": true, "amp": true,
}

// HostKey returns the host-alias key of host, so that aliases such as
// "www.example.com", "example.com", "www2.example.com" and
// "m.example.com" share a key (Fetterly, Manasse and Najork §4 found such
// aliases dominating naive mirror detection). The host is lower-cased,
// converted to ASCII with IDNA when possible, stripped of a port and a
// trailing dots, and leading "www", "www1".."www9", "m", "mobile" and
// "amp" labels are removed while what remains still has a registrable
// domain under the public suffix list ("www.co.uk" stays). IPv4 addresses
// in any number form ("2130706433", "0x7f.1") come back dotted decimal,
// other IP addresses as they are, lower case. HostKey(HostKey(h)) ==
// HostKey(h).
func HostKey(host string) string {
	h := strings.ToLower(strings.TrimSpace(host))
	if strings.HasPrefix(h, "[") { // [v6] or [v6]:port
		if i := strings.IndexByte(h, ']'); i >= 0 {
			return h[:i+1]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	h = strings.TrimRight(h, ".")
	if !plainHost(h) {
		if a, err := hostProfile.ToASCII(h); err == nil {
			h = strings.TrimRight(a, ".")
		}
	}
	if endsInNumber(h) {
		if a, ok := parseIPv4(h); ok {
			return a
		}
		return h
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return h
	}
	for {
		label, rest, ok := strings.Cut(h, ".")
		if !ok || !aliasLabels[label] {
			return h
		}
		if _, err := publicsuffix.EffectiveTLDPlusOne(rest); err != nil {
			return h
		}
		h = rest
	}
}
