package proxy

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// dialEngine returns the dial function of an engine's HTTP client: a
// dual-stack dial (engines on IPv6 addresses, [::1]:9200) whose
// connections time a read out when the engine is silent for idle, and,
// until [relaxDeadline] lifts it, at the deadline fasthttp set for the
// request.
//
// Why: fasthttp sets a connection's read deadline once per request
// (DoDeadline's deadline, capped by ReadTimeout), so alone it bounds the
// whole answer, body included. An answer streamed to a client (relay) is
// read only as fast as the client reads, so with that deadline a slow
// client reading a large, working answer would have it cut. Renewing the
// deadline on every read instead bounded only silence, so an engine that
// sent its head a byte at a time held the request for as long as it
// dripped. With this dial the request's deadline bounds connecting,
// sending, the head and any body winnow keeps whole; a body relayed to
// the client is bounded by the engine's silence only.
func dialEngine(idle time.Duration) fasthttp.DialFuncWithTimeout {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		var (
			c   net.Conn
			err error
		)
		if timeout > 0 {
			c, err = fasthttp.DialDualStackTimeout(addr, timeout)
		} else {
			c, err = fasthttp.DialDualStack(addr)
		}
		if err != nil {
			return nil, err
		}
		ic := &idleConn{Conn: c, idle: idle}
		ic.local = &engineAddr{Addr: c.LocalAddr(), conn: ic}
		return ic, nil
	}
}

// idleConn is a connection to an engine whose every Read must see data
// within idle of its start and, while hard is set, by hard. fasthttp's
// read deadline (one a request) becomes hard; [relaxDeadline] clears it
// once the answer's head is read and its body goes to the client. Like
// net.Conn, it is safe for the concurrent use fasthttp makes of it (a
// Close from another goroutine during a Read).
type idleConn struct {
	net.Conn
	idle time.Duration
	hard atomic.Int64 // Unix nanoseconds; 0: none
	// armed is the read deadline the connection has (Unix nanoseconds;
	// 0: none or unknown), so a read under the hard deadline, which
	// every read of a request's head and of a body winnow keeps is, does
	// not set it again: a deadline set costs a lock and a timer update.
	armed atomic.Int64
	local *engineAddr // a pointer: fasthttp asks for it on every request, and a struct would be boxed each time
}

func (c *idleConn) Read(p []byte) (int, error) {
	d := time.Now().Add(c.idle).UnixNano()
	if h := c.hard.Load(); h != 0 && h < d {
		d = h
	}
	if c.armed.Load() != d {
		if err := c.Conn.SetReadDeadline(time.Unix(0, d)); err != nil {
			c.armed.Store(0)
			return 0, err
		}
		c.armed.Store(d)
	}
	return c.Conn.Read(p)
}

// SetReadDeadline records t as the deadline of every read until the next
// call or [relaxDeadline].
func (c *idleConn) SetReadDeadline(t time.Time) error {
	c.setHard(t)
	return c.setArmed(t, c.Conn.SetReadDeadline(t))
}

func (c *idleConn) SetDeadline(t time.Time) error {
	c.setHard(t)
	return c.setArmed(t, c.Conn.SetDeadline(t))
}

// setArmed records t as the connection's read deadline after the call
// that set it returned err (on an error, the deadline is unknown).
func (c *idleConn) setArmed(t time.Time, err error) error {
	var a int64
	if err == nil && !t.IsZero() {
		a = t.UnixNano()
	}
	c.armed.Store(a)
	return err
}

func (c *idleConn) setHard(t time.Time) {
	var h int64
	if !t.IsZero() {
		h = t.UnixNano()
	}
	c.hard.Store(h)
}

// LocalAddr is the connection's local address, carrying the connection
// itself: fasthttp hands a response the address (Response.LocalAddr) but
// not the connection, and [relaxDeadline] needs the connection.
func (c *idleConn) LocalAddr() net.Addr { return c.local }

// engineAddr is an engine connection's local address and the connection.
type engineAddr struct {
	net.Addr
	conn *idleConn
}

// relaxDeadline lifts the request deadline from the connection resp's
// body is read from: from now on only the engine's silence bounds a read.
// For a body streamed to the client, whose pace is the client's. A
// response not from dialEngine's connections is left as it is.
func relaxDeadline(resp *fasthttp.Response) {
	if a, ok := resp.LocalAddr().(*engineAddr); ok {
		a.conn.hard.Store(0)
	}
}

// clientListener hands fasthttp client connections whose every Write must
// make progress within timeout of its start ([Options.WriteTimeout]).
// Why: fasthttp sets a connection's write deadline once per response, so
// its WriteTimeout bounds the whole answer: a slow client reading a large
// answer streamed from the engine would be cut by winnow although the
// engine and the client both keep going. Here the timeout means "the
// client took nothing for timeout".
type clientListener struct {
	net.Listener
	timeout time.Duration
}

func (l clientListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &clientConn{Conn: c, timeout: l.timeout}, nil
}

// clientConn is a client connection whose writes time out when the client
// takes nothing for timeout.
type clientConn struct {
	net.Conn
	timeout time.Duration
}

// clientWriteChunk is the most written to a client under one deadline: a
// refined answer is written in one piece, which a slow client may take
// far longer than timeout to read.
const clientWriteChunk = 64 << 10

func (c *clientConn) Write(p []byte) (n int, err error) {
	for len(p) > 0 {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
			return n, err
		}
		m, err := c.Conn.Write(p[:min(len(p), clientWriteChunk)])
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}
