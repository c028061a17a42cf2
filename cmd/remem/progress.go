package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/remem/remem/internal/progress"
)

// progressBar draws how far long work is on a terminal. Elsewhere (piped, a
// file, CI) it prints one line per stage when it has a name to print them
// under (the testnet, whose phases take minutes), and nothing otherwise.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	name  string // prefix of the lines printed off a terminal; "" prints none
	stage string
	last  time.Time
	shown bool
}

func newProgressBar(w io.Writer, name string) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressBar{w: w, tty: tty, name: name}
}

// context returns ctx carrying the bar for work that reports through
// internal/progress (sleep, ingest); ctx itself when the bar draws nothing.
func (b *progressBar) context(ctx context.Context) context.Context {
	if !b.tty && b.name == "" {
		return ctx
	}
	return progress.With(ctx, b.update)
}

func (b *progressBar) update(stage string, done, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if stage != b.stage {
		if b.tty && b.shown {
			fmt.Fprintln(b.w)
		}
		if !b.tty && b.name != "" {
			fmt.Fprintf(b.w, "%s: %s…\n", b.name, stage)
		}
		b.stage = stage
		b.last = time.Time{}
	}
	if !b.tty {
		return
	}
	if time.Since(b.last) < 50*time.Millisecond && done < total {
		return
	}
	b.last = time.Now()
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = min(1, float64(done)/float64(total))
	}
	full := int(frac * width)
	fmt.Fprintf(b.w, "\r%-10s [%s%s] %3.0f%% %d/%d ", stage, strings.Repeat("█", full), strings.Repeat("·", width-full), frac*100, done, total)
	b.shown = true
}

// finish ends the bar's line, so that what is printed next starts on its own.
func (b *progressBar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty && b.shown {
		fmt.Fprintln(b.w)
		b.shown = false
	}
}
