package commons

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// addrLog catches the address Serve logs.
type addrLog struct{ ch chan string }

type addrHandler struct{ l *addrLog }

func (h addrHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h addrHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "commons listening" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "addr" {
			select {
			case h.l.ch <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}
func (h addrHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h addrHandler) WithGroup(string) slog.Handler      { return h }

func newAddrLogger(l *addrLog) *slog.Logger { return slog.New(addrHandler{l}) }

func newHTTPServer(t *testing.T, h http.Handler) string {
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}
