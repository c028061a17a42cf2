package httpserve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/remem/remem/internal/testutil"
)

func short() Limits {
	return Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
		IdleTimeout: time.Second, CrowdedTimeout: 300 * time.Millisecond, MaxHeaderBytes: 4 << 10, MaxConns: 4, ShutdownGrace: 2 * time.Second}
}

func TestValidateNamesTheMissingLimit(t *testing.T) {
	l := short()
	l.MaxConns = 0
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "MaxConns") {
		t.Fatalf("Validate: %v", err)
	}
	if err := l.OrDefaults(short()).Validate(); err != nil {
		t.Fatalf("with defaults: %v", err)
	}
}

// A request in flight when ctx ends is answered; then Serve returns nil.
func TestServeStopsGracefully(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release // the stop has begun: the listener is closed
		_, _ = io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, short(), nil) }()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			answer <- err.Error()
			return
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		answer <- string(b)
	}()
	<-started
	cancel()
	// The request is in flight while the server stops: it answers once the
	// listener no longer takes connections.
	testutil.Eventually(t, 5*time.Second, "the listener to close", func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	})
	close(release)
	if got := <-answer; got != "done" {
		t.Fatalf("the request in flight got %q", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// More silent connections than MaxConns are cut after ReadHeaderTimeout,
// and a request then gets through.
func TestSilentConnectionsLetGo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), short(), nil)
	}()
	addr := ln.Addr().String()
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a request behind 8 silent connections: %v", err)
	}
	_ = resp.Body.Close()
}

// At the cap with every connection serving a request, a new connection
// waits: none of those requests is cut for it. It is served once one of
// them ends, and a stop while one waits closes it and leaves no goroutine.
func TestActiveConnectionsAreNotDropped(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	l := short()
	l.MaxConns, l.WriteTimeout = 2, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}, 4), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			started <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, l, nil) }()
	addr := ln.Addr().String()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c, bufio.NewReader(c)
	}
	send := func(c net.Conn, path string) {
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(c net.Conn, r *bufio.Reader, within time.Duration) error {
		_ = c.SetReadDeadline(time.Now().Add(within))
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err == nil && string(b) != "done" {
			err = fmt.Errorf("answered %q", b)
		}
		return err
	}
	type held struct {
		c net.Conn
		r *bufio.Reader
	}
	hold := func() []held {
		var hs []held
		for range l.MaxConns {
			c, r := dial()
			send(c, "/hold")
			<-started
			hs = append(hs, held{c, r})
		}
		return hs
	}

	hs := hold()
	waiting, wr := dial()
	send(waiting, "/")
	if err := answer(waiting, wr, 300*time.Millisecond); err == nil {
		t.Fatal("a connection over the cap was answered while every slot served a request")
	}
	close(release)
	for i, h := range hs {
		if err := answer(h.c, h.r, 5*time.Second); err != nil {
			t.Fatalf("held request %d: %v", i, err)
		}
	}
	if err := answer(waiting, wr, 5*time.Second); err != nil {
		t.Fatalf("the waiting connection once the requests ended: %v", err)
	}

	// Again, and stop while a connection waits at the cap.
	for _, h := range hs {
		_ = h.c.Close()
	}
	_ = waiting.Close()
	release = make(chan struct{})
	hs = hold()
	waiting, wr = dial()
	send(waiting, "/")
	cancel()
	_ = waiting.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Closed with its request unread: an end of file or a reset.
	var ne net.Error
	if b, err := io.ReadAll(wr); (errors.As(err, &ne) && ne.Timeout()) || len(b) > 0 {
		t.Fatalf("the connection waiting at the stop: %q %v, want it closed unanswered", b, err)
	}
	close(release)
	for i, h := range hs {
		if err := answer(h.c, h.r, 5*time.Second); err != nil {
			t.Fatalf("held request %d at the stop: %v", i, err)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}
