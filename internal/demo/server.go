package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// DefaultAddr is the address [Start] and [Serve] listen on when given "":
// a free port on the IPv4 loopback.
const DefaultAddr = "127.0.0.1:0"

// shutdownTimeout bounds the graceful shutdown of [Serve].
const shutdownTimeout = 5 * time.Second

// Server is an [Engine]'s handler served over HTTP on a listener of its
// own. Its methods are safe for concurrent use.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{} // closed when the serving goroutine has returned
	err  error         // why serving stopped; read after done is closed
}

// Start listens on addr (DefaultAddr if "") and serves e's handler there
// until [Server.Close] or [Server.Shutdown]. Warnings of the HTTP server
// go to the engine's logger.
func Start(addr string, e *Engine) (*Server, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	s := &Server{
		srv: &http.Server{
			Handler:           e.Handler(),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelWarn),
		},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() { // exits when the server is closed or shut down
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("demo: %w", err)
			e.log.Error("demo_serve", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL returns the server's base URL, such as "http://127.0.0.1:38411".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Shutdown stops the server gracefully: it stops listening and waits,
// until ctx is done, for the requests in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err == nil {
		<-s.done
		err = s.err
	}
	return err
}

// Close stops the server at once, closing its connections.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return errors.Join(err, s.err)
}

// Serve listens on addr (DefaultAddr if "") and serves e's handler there
// until ctx is done, then shuts down gracefully (waiting up to 5 seconds
// for requests in flight) in a goroutine of its own. It returns the bound
// address once the server accepts connections.
func Serve(ctx context.Context, addr string, e *Engine) (net.Addr, error) {
	s, err := Start(addr, e)
	if err != nil {
		return nil, err
	}
	go func() { // exits after ctx is done and the server has stopped
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		if err := s.Shutdown(sctx); err != nil {
			s.Close()
		}
	}()
	return s.Addr(), nil
}
