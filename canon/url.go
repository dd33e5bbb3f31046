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

// URL returns the canonical form of the http or https URL raw:
//
//   - surrounding white space is trimmed; scheme and host are lower case;
//     user information and the fragment are dropped;
//   - the host is converted to ASCII with IDNA (the x/net/idna Lookup
//     profile); a trailing dot is removed; IPv6 addresses are written in
//     their canonical form;
//   - the default port (80 for http, 443 for https) and an empty port are
//     removed;
//   - percent-encoding is normalized in path and query: escapes of
//     unreserved characters (A-Z a-z 0-9 - . _ ~) are decoded, other
//     escapes use upper-case hex, and characters that are not allowed
//     are escaped; "+" is left as is;
//   - dot segments are resolved (RFC 3986 §5.2.4); an empty path becomes
//     "/"; duplicate slashes and trailing slashes are kept, and index
//     pages such as "/index.html" are not stripped, since servers may
//     treat them differently;
//   - empty query parameters and tracking parameters (utm_*, gclid,
//     fbclid, msclkid, dclid, yclid, mc_cid, mc_eid, _ga, _hsenc, _hsmi,
//     igshid, ref_src, ...) are removed, the rest are sorted by key,
//     stably for equal keys; an empty query loses its "?".
//
// URL returns an error wrapping [ErrScheme] for other schemes and
// [ErrHost] for an empty host or one that fails IDNA, and the net/url
// error for unparsable input. URL(URL(x)) == URL(x) whenever URL(x)
// succeeds.
func URL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("canon: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	host, err := canonHost(u.Hostname())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return "", fmt.Errorf("canon: invalid port %q", p)
		}
		if !(scheme == "http" && n == 80 || scheme == "https" && n == 443) {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(n, 10))
		}
	}
	path := removeDotSegments(escape(u.EscapedPath(), partPath))
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	b.WriteString(path)
	if q := canonQuery(u.RawQuery); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

// canonHost lower-cases host, converts it to ASCII with IDNA and removes a
// trailing dot. IPv6 literals come back in brackets.
func canonHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("%w: empty", ErrHost)
	}
	if strings.IndexByte(host, ':') >= 0 {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("%w: %q", ErrHost, host)
		}
		return "[" + a.String() + "]", nil
	}
	h := strings.ToLower(host)
	if !plainHost(h) {
		var err error
		h, err = idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%w: %q: %v", ErrHost, host, err)
		}
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.HasSuffix(h, ".") || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("%w: %q", ErrHost, host)
	}
	return h, nil
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
)

// allowed reports whether c may appear unescaped in the given part.
func allowed(c byte, part int) bool {
	if unreserved(c) {
		return true
	}
	switch c {
	case '!', '$', '\'', '(', ')', '*', '+', ',', ';', ':', '@', '/':
		return true
	case '=':
		return part != partKey
	case '&':
		return part == partPath
	case '?':
		return part != partPath
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
		k = escape(k, partKey)
		if k == "" && (!hasEq || v == "") {
			continue
		}
		if dk, err := url.QueryUnescape(k); err == nil && tracking(dk) || tracking(k) {
			continue
		}
		s := k
		if hasEq {
			s += "=" + escape(v, partValue)
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
// trailing dot, and leading "www", "www1".."www9", "m", "mobile" and
// "amp" labels are removed while what remains still has a registrable
// domain under the public suffix list ("www.co.uk" stays). IP addresses
// are returned as they are, lower case.
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
	h = strings.TrimSuffix(h, ".")
	if !plainHost(h) {
		if a, err := idna.Lookup.ToASCII(h); err == nil {
			h = a
		}
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
