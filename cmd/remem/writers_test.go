package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
)

// memoryConfigFor is the node.Config that `remem NAME args...` opens the
// memory with, on a home whose config.toml is toml.
func memoryConfigFor(t *testing.T, toml, name string, args ...string) (node.Config, error) {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg node.Config
	var found *cli.Command
	for _, c := range commands() {
		if c.Name == name {
			found = c
		}
	}
	if found == nil {
		t.Fatalf("no command %s", name)
	}
	cmd := *found
	cmd.Action = func(c *cli.Context) (err error) {
		cfg, err = memoryConfig(c)
		return err
	}
	app := &cli.App{Name: "remem", Commands: []*cli.Command{&cmd}, Writer: io.Discard, ErrWriter: io.Discard,
		Flags:          []cli.Flag{&cli.StringFlag{Name: "home", Value: home}},
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"remem", name}, args...))
	return cfg, err
}

// config.toml's writer, writer_url, embed_url and threshold hold for every
// command that opens the memory itself (and may sleep), as for the node;
// the memory flags of the commands that have them override the keys.
func TestWriterSettingsHoldForEveryCommand(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sleep", "mcp", "status", "lessons", "recall", "context"} {
		cfg, err := memoryConfigFor(t, "writer = \"my-writer\"\nthreshold = 0.6\n", name)
		if cw, ok := cfg.Writer.(*consolidate.CommandWriter); err != nil || !ok || cw.Command != "my-writer" || cfg.Params.Threshold != 0.6 {
			t.Errorf("remem %s with config.toml's writer: %#v threshold %v %v", name, cfg.Writer, cfg.Params.Threshold, err)
		}
		cfg, err = memoryConfigFor(t, "writer_url = \"http://127.0.0.1:11434/v1\"\nwriter_model = \"llama3.2\"\nwriter_token_file = \""+token+"\"\nembed_url = \"http://127.0.0.1:11434/v1\"\n", name)
		chat, ok := cfg.Writer.(*consolidate.ChatWriter)
		if err != nil || !ok || chat.URL != "http://127.0.0.1:11434/v1" || chat.Model != "llama3.2" || chat.APIKey != "secret" {
			t.Errorf("remem %s with config.toml's writer_url: %#v %v", name, cfg.Writer, err)
		}
		if _, ok := cfg.Similarity.(*consolidate.Embedding); !ok || cfg.Params.Threshold != embedThreshold {
			t.Errorf("remem %s with config.toml's embed_url: %#v %v", name, cfg.Similarity, cfg.Params.Threshold)
		}
	}
	for _, name := range []string{"sleep", "mcp"} {
		cfg, err := memoryConfigFor(t, "writer = \"my-writer\"\nthreshold = 0.6\n", name, "--writer", "other", "--threshold", "0.7")
		if cw, ok := cfg.Writer.(*consolidate.CommandWriter); err != nil || !ok || cw.Command != "other" || cfg.Params.Threshold != 0.7 {
			t.Errorf("remem %s --writer over config.toml: %#v %v %v", name, cfg.Writer, cfg.Params.Threshold, err)
		}
	}
	t.Setenv("REMEM_WRITER_TOKEN", "from-env")
	cfg, err := memoryConfigFor(t, "", "sleep", "--writer-url", "http://127.0.0.1:1/v1")
	if chat, ok := cfg.Writer.(*consolidate.ChatWriter); err != nil || !ok || chat.APIKey != "from-env" {
		t.Errorf("--writer-url with REMEM_WRITER_TOKEN: %#v %v", cfg.Writer, err)
	}
	if _, err := memoryConfigFor(t, "threshold = 1.5\n", "status"); err == nil || !strings.Contains(err.Error(), "config.toml: threshold = 1.5") {
		t.Errorf("a bad threshold for status: %v", err)
	}
	if dc, err := nodeConfigFor(t, "writer_url = \"http://127.0.0.1:1/v1\"\nthreshold = 0.55\n"); err != nil || dc.Memory.Params.Threshold != 0.55 {
		t.Errorf("node: %v %v", dc.Memory.Params.Threshold, err)
	} else if _, ok := dc.Memory.Writer.(*consolidate.ChatWriter); !ok {
		t.Errorf("node writer: %#v", dc.Memory.Writer)
	}
}
