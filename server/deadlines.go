package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// defaultWriteTimeout is how long a response may take to be written when
// Config.WriteTimeout is zero.
const defaultWriteTimeout = 30 * time.Second

func (s *Server) writeTimeout() time.Duration {
	if s.cfg.WriteTimeout > 0 {
		return s.cfg.WriteTimeout
	}
	return defaultWriteTimeout
}

// writeDeadline gives every response writeTimeout to be written, so a
// client that stops reading does not hold a connection and its goroutine.
func (s *Server) writeDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setWriteDeadline(c.Response().Writer, time.Now().Add(s.writeTimeout()))
		return next(c)
	}
}

// streaming lets a download take as long as it needs while bytes flow:
// every write gets writeTimeout from its start, so only a reader that
// stalls for that long is cut off.
func (s *Server) streaming(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := c.Response().Writer
		c.Response().Writer = &extendingWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: s.writeTimeout()}
		return next(c)
	}
}

type extendingWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
}

func (w *extendingWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.idle))
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController (Echo's Flush) reach the connection.
func (w *extendingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// setWriteDeadline is http.NewResponseController(w).SetWriteDeadline(t)
// (the same search through Unwrap) without the controller's allocation.
func setWriteDeadline(w http.ResponseWriter, t time.Time) {
	for {
		switch u := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			_ = u.SetWriteDeadline(t)
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return
		}
	}
}
