package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/web"
)

// nodeConfig is $REMEM_HOME/config.toml; flags override it.
type nodeConfig struct {
	Teams        []string `toml:"teams"`
	Listen       []string `toml:"listen"`
	Bootstrap    []string `toml:"bootstrap"`
	MDNS         *bool    `toml:"mdns"`
	Members      string   `toml:"members"`
	PSK          string   `toml:"psk"`
	Folders      []string `toml:"folders"`
	Commons      []string `toml:"commons"`
	CommonsToken string   `toml:"commons_token_file"`
	Sleep        string   `toml:"sleep"`
	Pull         string   `toml:"pull"`
	API          string   `toml:"api"`
	Writer       string   `toml:"writer"`
	EmbedURL     string   `toml:"embed_url"`
	LogLevel     string   `toml:"log_level"`
}

func nodeCommand() *cli.Command {
	return &cli.Command{
		Name:  "node",
		Usage: "run this machine's memory: sleep loop, team gossip, folder, commons, local API",
		UsageText: `remem node [--team T ...] [--listen MULTIADDR ...] [--bootstrap MULTIADDR ...] [--mdns=false]
           [--members FILE] [--psk FILE] [--folder DIR ...] [--commons URL ...] [--token-file FILE]
           [--sleep 10m] [--pull 10m] [--api 127.0.0.1:7878]

With no flags the node starts at once: it sleeps every 10 minutes, serves the
local API and web page on 127.0.0.1:7878 and finds LAN peers with mDNS. It
listens on TCP and QUIC port 4002 on every interface by default.
Settings may live in $REMEM_HOME/config.toml: teams, listen, bootstrap, mdns,
members, psk, folders, commons, commons_token_file, sleep, pull, api, writer,
embed_url, log_level; flags override it. SIGINT or SIGTERM finishes the current step and exits 0.

Examples:
  remem node
  remem node --team backend --bootstrap /ip4/10.0.0.5/tcp/4002/p2p/12D3KooW...
  remem node --team ops --members ops-keys.txt --psk ops.psk --listen /ip4/0.0.0.0/tcp/4010
  remem node --folder /mnt/dropbox/remem --commons https://commons.example.org --sleep 2m`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "team", Usage: "join the team topic remem/1/team/NAME (repeatable)"},
			&cli.StringSliceFlag{Name: "listen", Usage: "libp2p listen multiaddr (repeatable; default TCP and QUIC on port 4002)"},
			&cli.StringSliceFlag{Name: "bootstrap", Usage: "a peer's full multiaddr with /p2p/ID (repeatable)"},
			&cli.BoolFlag{Name: "mdns", Value: true, Usage: "find peers on the local network"},
			&cli.StringFlag{Name: "members", Usage: "FILE of member keys or origins, one per line: a private team"},
			&cli.StringFlag{Name: "psk", Usage: "FILE holding a 32-byte pre-shared key (64 hex): a libp2p private network"},
			&cli.StringSliceFlag{Name: "folder", Usage: "a shared folder to sync (repeatable)"},
			&cli.StringSliceFlag{Name: "commons", Usage: "a commons URL to bootstrap from and publish to (repeatable)"},
			&cli.StringFlag{Name: "token-file", Usage: "FILE with the commons bearer token (or REMEM_COMMONS_TOKEN)"},
			&cli.DurationFlag{Name: "sleep", Value: 10 * time.Minute, Usage: "time between sleeps"},
			&cli.DurationFlag{Name: "pull", Value: 10 * time.Minute, Usage: "time between commons pulls"},
			&cli.StringFlag{Name: "api", Value: "127.0.0.1:7878", Usage: "address of the local HTTP API and web page"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			writerFlag, embedFlag,
		},
		Action: runNode,
	}
}

func runNode(c *cli.Context) error {
	h := home(c)
	if _, _, err := node.InitHome(h); err != nil {
		return err
	}
	cfg, err := loadNodeConfig(h)
	if err != nil {
		return err
	}
	merge := func(name string, fromFile []string) []string {
		if c.IsSet(name) {
			return c.StringSlice(name)
		}
		return fromFile
	}
	str := func(name, fromFile string) string {
		if c.IsSet(name) || fromFile == "" {
			return c.String(name)
		}
		return fromFile
	}
	dur := func(name, fromFile string) (time.Duration, error) {
		if c.IsSet(name) || fromFile == "" {
			return c.Duration(name), nil
		}
		d, err := time.ParseDuration(fromFile)
		if err != nil {
			return 0, fmt.Errorf("config.toml: %s = %q is not a duration like 10m", name, fromFile)
		}
		return d, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(str("log-level", cfg.LogLevel))); err != nil {
		return cli.Exit(fmt.Sprintf("--log-level: %v (use debug, info, warn or error)", err), 2)
	}
	logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))

	dc := node.DaemonConfig{
		// A short command may hold the home at this instant (a script
		// polling the node while it starts): wait for it, briefly.
		Memory:    node.Config{Home: h, LockWait: node.DefaultLockWait},
		Teams:     merge("team", cfg.Teams),
		Listen:    merge("listen", cfg.Listen),
		Bootstrap: merge("bootstrap", cfg.Bootstrap),
		MDNS:      c.Bool("mdns"),
		Folders:   merge("folder", cfg.Folders),
		Commons:   merge("commons", cfg.Commons),
		API:       str("api", cfg.API),
		Logger:    logger,
		Web:       web.Handler(),
	}
	if !c.IsSet("mdns") && cfg.MDNS != nil {
		dc.MDNS = *cfg.MDNS
	}
	if dc.SleepEvery, err = dur("sleep", cfg.Sleep); err != nil {
		return err
	}
	if dc.PullEvery, err = dur("pull", cfg.Pull); err != nil {
		return err
	}
	if w := str("writer", cfg.Writer); w != "" {
		dc.Memory.Writer = commandWriter(w)
	}
	if u := str("embed-url", cfg.EmbedURL); u != "" {
		if err := useEmbeddings(&dc.Memory, u); err != nil {
			return err
		}
	}
	if f := str("members", cfg.Members); f != "" {
		if dc.Members, err = readMembers(f); err != nil {
			return err
		}
	}
	if f := str("psk", cfg.PSK); f != "" {
		if dc.PSK, err = readPSK(f); err != nil {
			return err
		}
	}
	if dc.CommonsToken, err = commonsToken(str("token-file", cfg.CommonsToken)); err != nil {
		return err
	}
	dc.Ready = func(d *node.Daemon) {
		fmt.Fprintf(c.App.ErrWriter, "remem node %s running; API and web page on http://%s\n", d.Memory().Origin(), d.APIAddr())
		if g := d.Gossip(); g != nil {
			for _, a := range g.Addrs() {
				fmt.Fprintf(c.App.ErrWriter, "  listening on %s\n", a)
			}
		}
	}
	d, err := node.NewDaemon(dc)
	if err != nil {
		return err
	}
	return d.Run(c.Context)
}

func loadNodeConfig(h string) (nodeConfig, error) {
	var cfg nodeConfig
	path := filepath.Join(h, node.ConfigFile)
	md, err := toml.DecodeFile(path, &cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("reading %s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return cfg, fmt.Errorf("%s: unknown setting %q (see `remem node --help` for the names)", path, undecoded[0].String())
	}
	return cfg, nil
}

// readMembers reads a members file: keys or origins, one per line, # comments.
func readMembers(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading members: %w", err)
	}
	var out []string
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if (len(line) != 64 && len(line) != 16) || strings.Trim(line, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("%s:%d: %q is neither a key (64 lowercase hex) nor an origin (16 lowercase hex); `remem id` prints both", path, i+1, line)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no member", path)
	}
	return out, nil
}

// readPSK reads a pre-shared key: 64 hex characters (or 32 raw bytes).
func readPSK(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading psk: %w", err)
	}
	if len(data) == 32 {
		return data, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%s must hold 32 bytes as 64 hex characters; make one with `openssl rand -hex 32 > %s`", path, path)
	}
	return key, nil
}

// commonsToken reads the token file, or REMEM_COMMONS_TOKEN.
func commonsToken(path string) (string, error) {
	if path == "" {
		return os.Getenv("REMEM_COMMONS_TOKEN"), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the commons token: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}
