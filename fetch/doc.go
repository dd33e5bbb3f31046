// Package fetch gets search result pages for winnow's proxy, safely.
//
// A [Client] wraps a fasthttp client. Every page has one deadline, the
// shorter of [Options.Timeout] and the caller's context deadline, mapped to
// fasthttp's DoDeadline (fasthttp takes no context) with ReadTimeout as a
// backstop; it covers waiting for a connection slot, every redirect and the
// body. Concurrent Gets of one canonical URL share one fetch, and fetches are
// bounded globally and per host.
//
// The SSRF guard is on by default. The client's dial function resolves the
// host itself, checks every resolved address and dials the checked address,
// never the name again, so DNS rebinding cannot slip an internal address in
// between check and connect. Redirects are followed by the package, not by
// fasthttp, so every hop is checked and recorded in [Page.Chain] (redirect
// duplicates); the cookies a redirect sets go with the following hops to
// the same host, for that fetch only, so a site's cookie check (a
// redirect to the page itself setting a cookie) passes as in a browser.
// Refused are loopback, private (RFC 1918, fc00::/7), link-local, CGNAT,
// multicast, unspecified, broadcast, 0.0.0.0/8, documentation and
// benchmarking ranges, cloud metadata addresses, and the
// IPv4-mapped, NAT64, 6to4 and Teredo forms of refused IPv4 addresses.
// IPv4-compatible IPv6 addresses (::/96, deprecated) are refused outright.
// IP addresses in URLs are parsed as browsers and inet_aton do, so
// http://2130706433/, http://0177.0.0.1/, http://0x7f.1/ and http://127.1/
// are all 127.0.0.1 and refused. [Options.Allow] opens chosen networks;
// [Options.AllowPrivate] turns the guard off (unsafe). Only http and https
// are fetched, and never on a port of the Fetch standard's bad-port list
// (25, 6665, 10080, ...), which browsers refuse too.
//
// Bodies are streamed, never buffered whole by fasthttp: reading stops at
// [Options.MaxBodyBytes] on the wire and at [Options.MaxDecodedBytes] after
// gzip, deflate or br decoding, so a 1 GB page or a decompression bomb is cut
// off early. A page over either cap fails with [ErrTooLarge], or, with
// [Options.Truncate], is returned cut with [Page.Truncated] set. Only the
// media types of [Options.AllowedContentTypes] are read; the Content-Type
// header, charset included, is handed to the caller in [Page.ContentType]
// (canon.HTML decodes the charset). [Validators] make a request conditional,
// and a 304 answer sets [Page.NotModified] (a 304 to an unconditional
// request fails with [ErrStatus]: its empty body is not the page).
//
// Bodies are copied out of fasthttp's buffers before they are released: a
// [Page] shares no memory with the client or with other callers.
package fetch
