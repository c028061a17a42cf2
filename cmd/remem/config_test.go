package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
)

func TestNodeConfig(t *testing.T) {
	home := t.TempDir()
	if cfg, err := loadNodeConfig(home); err != nil || cfg.Teams != nil {
		t.Fatalf("no config file: %+v %v", cfg, err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("teams = [\"backend\"]\nsleep = \"5m\"\nmdns = false\n")
	cfg, err := loadNodeConfig(home)
	if err != nil || len(cfg.Teams) != 1 || cfg.Sleep != "5m" || cfg.MDNS == nil || *cfg.MDNS {
		t.Fatalf("config: %+v %v", cfg, err)
	}
	write("tems = [\"typo\"]\n")
	if _, err := loadNodeConfig(home); err == nil || !strings.Contains(err.Error(), "unknown setting") {
		t.Fatalf("a misspelt setting was accepted: %v", err)
	}
	write("teams = \n")
	if _, err := loadNodeConfig(home); err == nil || !strings.Contains(err.Error(), "config.toml") {
		t.Fatalf("broken TOML: %v", err)
	}
}

func TestMembersAndPSKFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write := func(s string) { os.WriteFile(path, []byte(s), 0o600) }
	write("# team\nfb3a5590974ea181\n595b6457bd8219cd6f5f75b84813270ca3863809026c16f574ef0f6ced324794  # alice\n")
	if m, err := readMembers(path); err != nil || len(m) != 2 {
		t.Fatalf("members: %v %v", m, err)
	}
	for _, bad := range []string{"", "# only comments\n", "FB3A5590974EA181\n", "not-a-key\n", "fb3a5590974ea18\n"} {
		write(bad)
		if _, err := readMembers(path); err == nil {
			t.Errorf("members file %q accepted", bad)
		}
	}
	write(strings.Repeat("ab", 32) + "\n")
	if k, err := readPSK(path); err != nil || len(k) != 32 {
		t.Fatalf("psk: %v", err)
	}
	for _, bad := range []string{"short", strings.Repeat("zz", 32), strings.Repeat("ab", 31)} {
		write(bad)
		if _, err := readPSK(path); err == nil {
			t.Errorf("psk %q accepted", bad)
		}
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	for _, c := range commands() {
		all := append([]*cli.Command{c}, c.Subcommands...)
		for _, sub := range all {
			if sub.Subcommands != nil && sub.Action == nil {
				continue
			}
			if !strings.Contains(sub.UsageText, "Example") {
				t.Errorf("remem %s: --help has no examples", sub.Name)
			}
		}
	}
}

func TestUseEmbeddings(t *testing.T) {
	var cfg node.Config
	if err := useEmbeddings(&cfg, "http://127.0.0.1:1/v1"); err != nil || cfg.Params.Threshold != embedThreshold || cfg.Similarity == nil {
		t.Fatalf("%+v %v", cfg.Params, err)
	}
	t.Setenv("REMEM_SIMILARITY_THRESHOLD", "0.7")
	if err := useEmbeddings(&cfg, "http://127.0.0.1:1/v1"); err != nil || cfg.Params.Threshold != 0.7 {
		t.Fatalf("override: %+v %v", cfg.Params, err)
	}
	t.Setenv("REMEM_SIMILARITY_THRESHOLD", "high")
	if err := useEmbeddings(&cfg, "http://127.0.0.1:1/v1"); err == nil {
		t.Fatal("a bad threshold was accepted")
	}
}
