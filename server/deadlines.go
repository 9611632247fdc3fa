package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// defaultWriteTimeout is how long a response may take to be written when
// Config.WriteTimeout is zero.
const defaultWriteTimeout = 30 * time.Second

// writeDeadlines bound how long a response may take to be written
// (Config.WriteTimeout).
type writeDeadlines struct{ timeout time.Duration }

// writeDeadline gives every response the timeout to be written, so a
// client that stops reading does not hold a connection and its goroutine.
func (d writeDeadlines) writeDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setWriteDeadline(c.Response().Writer, time.Now().Add(d.timeout))
		return next(c)
	}
}

// streaming lets a download take as long as it needs while bytes flow:
// every write gets the timeout from its start, so only a reader that
// stalls for that long is cut off.
func (d writeDeadlines) streaming(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := c.Response().Writer
		c.Response().Writer = &extendingWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: d.timeout}
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
