package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
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
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(200 * time.Millisecond)
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
