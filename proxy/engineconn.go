package proxy

import (
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// dialEngine returns the dial function of an engine's HTTP client: a
// dual-stack dial (engines on IPv6 addresses, [::1]:9200) whose
// connections time reads out only when the engine is silent for idle.
//
// Why: fasthttp sets a connection's read deadline once per request, so
// its ReadTimeout bounds the whole answer, body included. An answer
// streamed to a client (relay) is read only as fast as the client reads,
// so with that deadline a slow client reading a large, working answer
// would have it cut. With this dial the engine timeout means "the engine
// said nothing for idle": to start answering, and between any two reads
// of its answer.
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
		return &idleConn{Conn: c, idle: idle}, nil
	}
}

// idleConn is a connection to an engine whose every Read must see data
// within idle of its start. fasthttp's own read deadlines, set once per
// request, are overridden by the next Read's. Like net.Conn, it is safe
// for the concurrent use fasthttp makes of it (a Close from another
// goroutine during a Read).
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
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
