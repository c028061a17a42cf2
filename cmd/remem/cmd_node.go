package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/node/web"
)

func nodeCommand() *cli.Command {
	def := defaultNodeSettings()
	return &cli.Command{
		Name:  "node",
		Usage: "run this machine's memory: sleep loop, team gossip, folder, commons, local API",
		UsageText: `remem node [--team T ...] [--listen MULTIADDR ...] [--bootstrap MULTIADDR ...] [--mdns=false]
           [--members [TEAM=]FILE ...] [--psk FILE] [--folder DIR ...] [--commons URL ...] [--token-file FILE]
           [--relay MULTIADDR ...] [--relay-service] [--reachability public|private] [--directory=false]
           [--team-key TEAM=FILE ...]
           [--sleep 10m] [--pull 10m] [--quorum 3] [--window 2160h] [--api 127.0.0.1:7878] [--layer NAME=FILE ...]
           [--model claude|codex|gemini|ollama:MODEL|llm:MODEL|endpoint]
           [--writer CMD | --writer-url URL [--writer-model M] [--writer-token-file F]] [--embed-url URL] [--threshold T]

With no flags the node starts at once: it sleeps every 10 minutes, serves the
local API and web page on 127.0.0.1:7878 and finds LAN peers with mDNS. It
listens on TCP and QUIC port 4002 on every interface by default. The API
takes the token in $REMEM_HOME/api-token (the CLI and the MCP server send it
themselves); the node prints the page's link with the token, and so does
` + "`remem web`" + `. A lesson
is common once --quorum verifiers have it and fades after --window (90 days)
without a new verification; config.toml's quorum, window, layers, writer
and similarity settings hold for every command on the home.
Settings may live in $REMEM_HOME/config.toml, under these keys; flags
override it, and an unknown key or a bad value is an error naming the key
or the flag:
` + settingKeys() + `
SIGINT or SIGTERM finishes the current step and exits 0.

Examples:
  remem node
  remem node --team backend --bootstrap /ip4/10.0.0.5/tcp/4002/p2p/12D3KooW...
  remem node --team ops --members ops-keys.txt --psk ops.psk --listen /ip4/0.0.0.0/tcp/4010
  remem node --team ops --team public --members ops=ops-keys.txt
  remem node --folder /mnt/dropbox/remem --commons https://commons.example.org --sleep 2m
  remem node --team backend --commons https://commons.example.org --reachability private
  remem node --team backend --relay-service --listen /ip4/0.0.0.0/tcp/4002
  remem node --writer-url http://127.0.0.1:11434/v1 --writer-model llama3.2
  remem node --model claude`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "team", Usage: "join the team topic remem/1/team/NAME (repeatable)"},
			&cli.StringSliceFlag{Name: "listen", Usage: "libp2p listen multiaddr (repeatable; default TCP and QUIC on port 4002)"},
			&cli.StringSliceFlag{Name: "bootstrap", Usage: "a peer's full multiaddr with /p2p/ID (repeatable)"},
			&cli.BoolFlag{Name: "mdns", Value: def.MDNS, Usage: "find peers on the local network"},
			&cli.StringSliceFlag{Name: "members", Usage: "FILE of member keys or origins, one per line: every team private; TEAM=FILE: that team only (repeatable)"},
			&cli.StringFlag{Name: "psk", Usage: "FILE holding a 32-byte pre-shared key (64 hex): a libp2p private network"},
			&cli.StringSliceFlag{Name: "relay", Usage: "a circuit relay's full multiaddr with /p2p/ID: behind NAT, reserve a slot there (repeatable; a --commons' relay is taken too)"},
			&cli.BoolFlag{Name: "relay-service", Usage: "offer a circuit relay to nodes behind NAT (for a node with a public address): whole between members and team peers, within go-libp2p's default limits for anyone else"},
			&cli.StringFlag{Name: "reachability", Usage: "public or private: say what AutoNAT would find out (default: AutoNAT decides)"},
			&cli.BoolFlag{Name: "directory", Value: def.Directory, Usage: "register in each --commons' peer directory and dial the team peers it lists"},
			&cli.StringSliceFlag{Name: "team-key", Usage: "TEAM=FILE: the team's directory key (64 hex, made by remem team-key); a team without one is not in any peer directory (repeatable)"},
			&cli.StringSliceFlag{Name: "folder", Usage: "a shared folder to sync (repeatable)"},
			&cli.StringSliceFlag{Name: "commons", Usage: "a commons URL to bootstrap from and publish to (repeatable)"},
			&cli.StringFlag{Name: "token-file", Usage: "FILE with the commons bearer token (or REMEM_COMMONS_TOKEN)"},
			&cli.DurationFlag{Name: "sleep", Value: time.Duration(def.Sleep), Usage: "time between sleeps"},
			&cli.DurationFlag{Name: "pull", Value: time.Duration(def.Pull), Usage: "time between commons pulls"},
			&cli.IntFlag{Name: "quorum", Value: def.Quorum, Usage: "N: the verifiers (publishers and confirmers besides the author) that make a lesson common"},
			&cli.DurationFlag{Name: "window", Value: time.Duration(def.Window), Usage: "W: a common lesson fades after W without a verification and leaves the active view after 2W; strength halves every W/2"},
			&cli.StringSliceFlag{Name: "trust", Usage: "KEY or ORIGIN whose confirmations and revocations count (SPEC §8 admitted verifiers: your other machines, colleagues; repeatable)"},
			&cli.BoolFlag{Name: "admit-all", Usage: "count every origin as a verifier, as the seed does: only for a closed network no stranger can reach"},
			&cli.IntFlag{Name: "stranger-records", Value: def.StrangerRecs, Usage: "hold at most N records of origins not admitted (trust, members), over every scope; past it only what matters here comes in"},
			&cli.IntFlag{Name: "stranger-bytes", Value: def.StrangerSize, Usage: "hold at most N bytes of records of origins not admitted (unknown members counted)"},
			&cli.StringFlag{Name: "api", Value: def.API, Usage: "address of the local HTTP API and web page"},
			&cli.StringFlag{Name: "log-level", Value: def.LogLevel, Usage: "debug, info, warn or error"},
			&cli.StringSliceFlag{Name: "layer", Usage: "NAME=FILE: a lessons.jsonl (absolute path) composed as a layer for every reader (repeatable)"},
			modelFlag, writerFlag, writerURLFlag, writerModelFlag, writerTokenFlag, embedFlag, thresholdFlag,
		},
		Action: runNode,
	}
}

func runNode(c *cli.Context) error {
	h := home(c)
	if _, _, err := node.InitHome(h); err != nil {
		return err
	}
	dc, err := nodeDaemonConfig(c, h)
	if err != nil {
		return err
	}
	if c.Bool("verbose") || c.Bool("quiet") { // over --log-level
		dc.Logger = newLogger(c, slog.LevelInfo)
	}
	dc.Web = web.Handler()
	dc.Ready = func(d *node.Daemon) {
		m := d.Memory()
		fmt.Fprintf(c.App.ErrWriter, "remem node %s running; API on http://%s\n", m.Origin(), d.APIAddr())
		fmt.Fprintf(c.App.ErrWriter, "  web page: %s (the link holds the API token; `remem web` prints it again)\n", node.WebURL(d.APIAddr(), m.APIToken()))
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

// nodeDaemonConfig is runNode's config: config.toml, then the flags, then
// the files they name, checked by DaemonConfig.Validate before anything
// starts.
func nodeDaemonConfig(c *cli.Context, home string) (node.DaemonConfig, error) {
	s, src, err := loadNodeSettings(home)
	if err != nil {
		return node.DaemonConfig{}, err
	}
	s.override(c, &src)
	dc, err := s.daemonConfig(home, src, c.App.ErrWriter)
	if err != nil {
		return dc, err
	}
	if err := dc.Validate(); err != nil {
		return dc, src.explain(err)
	}
	// A layer file is read again whenever it changes; one that cannot be
	// read at start is a mistake in the setting.
	for _, lf := range dc.Memory.Layers {
		if _, err := node.ReadLayer(lf.Name, lf.Path); err != nil {
			return dc, fmt.Errorf("%s: %w", src.name("layers"), err)
		}
	}
	return dc, nil
}

// nodeSettings are the settings of `remem node`, one field each:
// $REMEM_HOME/config.toml decoded over defaultNodeSettings, then every flag
// that was set (on the command line or by its environment variable). The
// tags tie a field to the rest: toml is its key, flag its flag in
// nodeCommand, and either to, the node.DaemonConfig field it is copied
// into as it is, or via, the field daemonConfig reads it into (a file's
// content, a command). Validate's findings about those fields name the key
// or the flag. A new setting is a field here, its flag, and a line in the
// README; --help lists the keys from the tags.
type nodeSettings struct {
	Teams        []string   `toml:"teams" flag:"team" to:"Gossip.Teams"`
	Listen       []string   `toml:"listen" flag:"listen" to:"Gossip.Listen"`
	Bootstrap    []string   `toml:"bootstrap" flag:"bootstrap" to:"Gossip.Bootstrap"`
	MDNS         bool       `toml:"mdns" flag:"mdns" to:"Gossip.MDNS"`
	Members      stringList `toml:"members" flag:"members" via:"Gossip.Members Gossip.TeamMembers"`
	PSK          string     `toml:"psk" flag:"psk" via:"Gossip.PSK"`
	Relays       []string   `toml:"relays" flag:"relay" to:"Gossip.Relays"`
	RelayService bool       `toml:"relay_service" flag:"relay-service" to:"Gossip.RelayService"`
	Reachability string     `toml:"reachability" flag:"reachability" to:"Gossip.Reachability"`
	Directory    bool       `toml:"directory" flag:"directory" via:"NoDirectory"`
	TeamKeys     stringList `toml:"team_keys" flag:"team-key" via:"TeamKeys"`
	Folders      []string   `toml:"folders" flag:"folder" to:"Folders"`
	Commons      []string   `toml:"commons" flag:"commons" to:"Commons"`
	CommonsToken string     `toml:"commons_token_file" flag:"token-file" via:"CommonsToken"`
	Sleep        duration   `toml:"sleep" flag:"sleep" to:"SleepEvery"`
	Pull         duration   `toml:"pull" flag:"pull" to:"PullEvery"`
	Quorum       int        `toml:"quorum" flag:"quorum" to:"Memory.Params.State.N"`
	Window       duration   `toml:"window" flag:"window" to:"Memory.Params.State.W"`
	Trust        []string   `toml:"trust" flag:"trust" to:"Memory.Admission.Trust"`
	AdmitAll     bool       `toml:"admit_all" flag:"admit-all" to:"Memory.Admission.All"`
	StrangerRecs int        `toml:"stranger_records" flag:"stranger-records" to:"Memory.Strangers.Records"`
	StrangerSize int        `toml:"stranger_bytes" flag:"stranger-bytes" to:"Memory.Strangers.Bytes"`
	API          string     `toml:"api" flag:"api" to:"API"`
	Model        string     `toml:"model" flag:"model" via:"Memory.Model Memory.ModelName"`
	Writer       string     `toml:"writer" flag:"writer" via:"Memory.Writer"`
	WriterURL    string     `toml:"writer_url" flag:"writer-url" via:"Memory.Writer"`
	WriterModel  string     `toml:"writer_model" flag:"writer-model" via:"Memory.Writer"`
	WriterToken  string     `toml:"writer_token_file" flag:"writer-token-file" via:"Memory.Writer"`
	EmbedURL     string     `toml:"embed_url" flag:"embed-url" via:"Memory.Similarity Memory.Params"`
	Threshold    *float64   `toml:"threshold" flag:"threshold" via:"Memory.Params.Threshold"`
	LogLevel     string     `toml:"log_level" flag:"log-level" via:"Logger"`
	Layers       stringList `toml:"layers" flag:"layer" via:"Memory.Layers"`
}

// defaultNodeSettings are node.DefaultDaemonConfig in the settings' terms;
// the flags show them as their defaults.
func defaultNodeSettings() nodeSettings {
	d := node.DefaultDaemonConfig()
	return nodeSettings{MDNS: d.Gossip.MDNS, Directory: !d.NoDirectory, Sleep: duration(d.SleepEvery), Pull: duration(d.PullEvery),
		Quorum: d.Memory.Params.State.N, Window: duration(d.Memory.Params.State.W), API: d.API, LogLevel: "info",
		StrangerRecs: node.DefaultStrangerRecords, StrangerSize: node.DefaultStrangerBytes}
}

// settingFields are nodeSettings' fields, with their tags.
func settingFields() []reflect.StructField {
	return reflect.VisibleFields(reflect.TypeFor[nodeSettings]())
}

// settingKeys lists the config.toml keys for --help, indented, in lines
// of at most 72 characters.
func settingKeys() string {
	var b, line strings.Builder
	for i, f := range settingFields() {
		key := f.Tag.Get("toml")
		if i < len(settingFields())-1 {
			key += ","
		}
		if line.Len()+1+len(key) > 72 {
			b.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() == 0 {
			line.WriteString(" ")
		}
		line.WriteString(" " + key)
	}
	b.WriteString(line.String())
	return b.String()
}

// duration is a config.toml duration: a string like "10m" (a bare number
// would be nanoseconds, so it is refused).
type duration time.Duration

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration like 10m or 1h30m", b)
	}
	*d = duration(v)
	return nil
}

// stringList is a config.toml value that is one string or a list of them.
type stringList []string

func (l *stringList) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*l = stringList{v}
		return nil
	case []any:
		out := make(stringList, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("%v is not a string", e)
			}
			out = append(out, s)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("want a string or a list of strings, not %T", v)
}

// settingSources says where each setting came from, to name it in errors.
type settingSources struct {
	file  string          // the config.toml path
	flags map[string]bool // flags that were set
}

// loadNodeSettings reads home's config.toml over the defaults (a missing
// file is no error; an unknown key is).
func loadNodeSettings(home string) (nodeSettings, settingSources, error) {
	src := settingSources{file: filepath.Join(home, node.ConfigFile), flags: map[string]bool{}}
	data, err := os.ReadFile(src.file)
	if errors.Is(err, fs.ErrNotExist) {
		return defaultNodeSettings(), src, nil
	}
	if err != nil {
		return defaultNodeSettings(), src, fmt.Errorf("reading %s: %w", src.file, err)
	}
	s, _, err := decodeNodeSettings(src.file, string(data))
	return s, src, err
}

// decodeNodeSettings decodes config.toml's text (from file) over the
// defaults; `remem config` checks an edit with it before writing.
func decodeNodeSettings(file, text string) (nodeSettings, toml.MetaData, error) {
	s := defaultNodeSettings()
	md, err := toml.Decode(text, &s)
	if err != nil {
		return s, md, fmt.Errorf("reading %s: %w", file, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return s, md, fmt.Errorf("%s: unknown setting %q (see `remem node --help` for the names)", file, undecoded[0].String())
	}
	return s, md, nil
}

// override copies every flag that was set into s: the one place where
// flags win over config.toml. With only, it copies only those flags (a
// command other than node may have a flag of the same name and another
// meaning).
func (s *nodeSettings) override(c *cli.Context, src *settingSources, only ...string) {
	v := reflect.ValueOf(s).Elem()
	for _, f := range settingFields() {
		name := f.Tag.Get("flag")
		if !c.IsSet(name) || (only != nil && !slices.Contains(only, name)) {
			continue
		}
		src.flags[name] = true
		var val any
		switch f.Type.Kind() {
		case reflect.Pointer: // *float64: set or not
			x := c.Float64(name)
			val = &x
		case reflect.Slice:
			val = c.StringSlice(name)
		case reflect.Bool:
			val = c.Bool(name)
		case reflect.Int:
			val = c.Int(name)
		case reflect.Int64:
			val = c.Duration(name)
		default:
			val = c.String(name)
		}
		v.FieldByIndex(f.Index).Set(reflect.ValueOf(val).Convert(f.Type))
	}
}

// daemonConfig turns the settings into the node's config, starting from
// node.DefaultDaemonConfig (whose DefaultLockWait lets the node wait for a
// short command holding the home): the `to` fields as they are, the `via`
// fields read.
func (s nodeSettings) daemonConfig(home string, src settingSources, logTo io.Writer) (node.DaemonConfig, error) {
	dc := node.DefaultDaemonConfig()
	dc.Memory.Home = home
	s.copyTo(&dc)
	var level slog.Level
	if err := level.UnmarshalText([]byte(s.LogLevel)); err != nil {
		return dc, cli.Exit(fmt.Sprintf("%s = %q: want debug, info, warn or error", src.name("log_level"), s.LogLevel), 2)
	}
	dc.Logger = slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level}))
	if err := s.memory(&dc.Memory, src); err != nil {
		return dc, err
	}
	if err := readAllMembers(s.Members, &dc.Gossip); err != nil {
		return dc, fmt.Errorf("%s: %w", src.name("members"), err)
	}
	var err error
	if dc.Memory.Layers, err = layerFiles(s.Layers); err != nil {
		return dc, fmt.Errorf("%s: %w", src.name("layers"), err)
	}
	if s.PSK != "" {
		if dc.Gossip.PSK, err = readPSK(s.PSK); err != nil {
			return dc, fmt.Errorf("%s: %w", src.name("psk"), err)
		}
	}
	dc.NoDirectory = !s.Directory
	if dc.TeamKeys, err = readTeamKeys(s.TeamKeys); err != nil {
		return dc, fmt.Errorf("%s: %w", src.name("team_keys"), err)
	}
	if dc.CommonsToken, err = commonsToken(s.CommonsToken); err != nil {
		return dc, fmt.Errorf("%s: %w", src.name("commons_token_file"), err)
	}
	return dc, nil
}

// memory sets up cfg's model (cmd_model.go) or writer (a command, or a
// chat endpoint), similarity
// (lexical, or embeddings) and threshold from the settings. Validate
// checks the threshold afterwards.
func (s nodeSettings) memory(cfg *node.Config, src settingSources) error {
	switch {
	case s.Model != "":
		if err := s.useModel(cfg, src); err != nil {
			return err
		}
	case s.Writer != "" && s.WriterURL != "":
		return cli.Exit(fmt.Sprintf("%s and %s are both set: a memory has one writer; keep one of them", src.name("writer"), src.name("writer_url")), 2)
	case s.WriterURL == "" && (s.WriterModel != "" || s.WriterToken != ""):
		return cli.Exit(fmt.Sprintf("%s or %s is set without writer_url: give the chat endpoint with --writer-url or writer_url", src.name("writer_model"), src.name("writer_token_file")), 2)
	case s.Writer != "":
		cfg.Writer = commandWriter(s.Writer)
	case s.WriterURL != "":
		if err := checkEndpoint(src.name("writer_url"), s.WriterURL); err != nil {
			return err
		}
		token, err := writerToken(s.WriterToken)
		if err != nil {
			return fmt.Errorf("%s: %w", src.name("writer_token_file"), err)
		}
		cfg.Writer = &consolidate.ChatWriter{URL: s.WriterURL, Model: s.WriterModel, APIKey: token, Timeout: time.Minute}
	}
	if s.EmbedURL != "" {
		if err := checkEndpoint(src.name("embed_url"), s.EmbedURL); err != nil {
			return err
		}
		if err := useEmbeddings(cfg, s.EmbedURL); err != nil {
			return fmt.Errorf("%s: %w", src.name("embed_url"), err)
		}
	}
	if s.Threshold != nil {
		if cfg.Params == (node.Params{}) {
			cfg.Params = node.DefaultParams()
		}
		cfg.Params.Threshold = *s.Threshold
	}
	return nil
}

// writerToken reads the chat writer's token file, or REMEM_WRITER_TOKEN.
func writerToken(path string) (string, error) {
	if path == "" {
		return os.Getenv("REMEM_WRITER_TOKEN"), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the writer token: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// layerFiles reads the NAME=FILE entries of `layers` (paths are checked by
// Validate: absolute).
func layerFiles(entries []string) ([]node.LayerFile, error) {
	var out []node.LayerFile
	for _, e := range entries {
		lf, err := node.ParseLayerFile(e)
		if err != nil {
			return nil, err
		}
		out = append(out, lf)
	}
	return out, nil
}

// copyTo copies the settings with a `to` tag into dc, as they are.
func (s nodeSettings) copyTo(dc *node.DaemonConfig) {
	dv, sv := reflect.ValueOf(dc).Elem(), reflect.ValueOf(s)
	for _, f := range settingFields() {
		if to := f.Tag.Get("to"); to != "" {
			dst := dv
			for _, name := range strings.Split(to, ".") {
				dst = dst.FieldByName(name)
			}
			dst.Set(sv.FieldByIndex(f.Index).Convert(dst.Type()))
		}
	}
}

// memoryConfig is the memory as home's config.toml sets it up (quorum,
// window, layers, writer, embeddings, threshold), for the commands that
// open the memory themselves: they compute the states, strengths and views
// a node running on home would, and sleep as it would. Of the flags, only
// the command's own memoryFlags override config.toml. A layer file that
// cannot be read is left out with a warning on stderr. It never makes a
// memory (only init and node do), so a mistyped home is an error, not a
// new key.
func memoryConfig(c *cli.Context) (node.Config, error) {
	h := home(c)
	s, src, err := loadNodeSettings(h)
	if err != nil {
		return node.Config{}, err
	}
	s.override(c, &src, memoryFlags...)
	dc := node.DefaultDaemonConfig()
	s.copyTo(&dc)
	layers, err := layerFiles(s.Layers)
	if err != nil {
		return node.Config{}, fmt.Errorf("%s: %w", src.name("layers"), err)
	}
	if err := readAllMembers(s.Members, &dc.Gossip); err != nil {
		return node.Config{}, fmt.Errorf("%s: %w", src.name("members"), err)
	}
	cfg := node.Config{Home: h, Now: clock(), Params: dc.Memory.Params, Layers: layers, Admission: dc.Admission(), Strangers: dc.Memory.Strangers}
	if err := s.memory(&cfg, src); err != nil {
		return node.Config{}, err
	}
	var l check.List
	l.Nested("Memory", cfg.Validate())
	if err := l.Err(); err != nil {
		return node.Config{}, src.explain(err)
	}
	cfg.Logger = newLogger(c, slog.LevelWarn) // -v shows the memory's info and debug logs
	return cfg, nil
}

// readAllMembers reads the members files into g: FILE for every team,
// TEAM=FILE for that team only (a private team beside open ones). Files of
// the same reach add up.
func readAllMembers(entries []string, g *gossip.Config) error {
	for _, e := range entries {
		team, file, ok := strings.Cut(e, "=")
		if !ok || !gossip.ValidTeamName(team) {
			team, file = "", e
		}
		list, err := readMembers(file)
		if err != nil {
			return err
		}
		if team == "" {
			g.Members = append(g.Members, list...)
			continue
		}
		if g.TeamMembers == nil {
			g.TeamMembers = map[string][]string{}
		}
		g.TeamMembers[team] = append(g.TeamMembers[team], list...)
	}
	return nil
}

// name is how an error names a setting: by its flag when one was set,
// else by its key in config.toml.
func (src settingSources) name(key string) string {
	for _, f := range settingFields() {
		if f.Tag.Get("toml") == key && src.flags[f.Tag.Get("flag")] {
			return "--" + f.Tag.Get("flag")
		}
	}
	return fmt.Sprintf("%s: %s", src.file, key)
}

// explain words Validate's findings as settings: a field that a setting
// feeds is named by that setting's flag or key; other fields keep their Go
// names.
func (src settingSources) explain(err error) error {
	fes := check.Fields(err)
	if len(fes) == 0 {
		return err
	}
	lines := make([]string, 0, len(fes))
	for _, fe := range fes {
		line := "node config: " + fe.Error()
		for _, f := range settingFields() {
			if !slices.Contains(strings.Fields(f.Tag.Get("to")+" "+f.Tag.Get("via")), fe.Field) {
				continue
			}
			named := check.FieldError{Field: f.Tag.Get("toml"), Value: fe.Value, Want: fe.Want}
			if flag := f.Tag.Get("flag"); src.flags[flag] {
				named.Field = "--" + flag
				line = named.Error()
			} else {
				line = src.file + ": " + named.Error()
			}
		}
		lines = append(lines, line)
	}
	return errors.New(strings.Join(lines, "\n"))
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
	return readKey32(path, "psk", fmt.Sprintf("`openssl rand -hex 32 > %s`", path))
}

// readKey32 reads a 32-byte key file (what it is for, and how to make
// one, for the errors): 64 hex characters, or 32 raw bytes.
func readKey32(path, what, how string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if len(data) == 32 {
		return data, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%s must hold 32 bytes as 64 hex characters; make one with %s", path, how)
	}
	return key, nil
}

// readTeamKeys reads the team keys: TEAM=FILE each, one key per team.
func readTeamKeys(entries []string) (map[string][]byte, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	keys := map[string][]byte{}
	for _, e := range entries {
		team, file, ok := strings.Cut(e, "=")
		switch {
		case !ok || file == "" || !gossip.ValidTeamName(team):
			return nil, fmt.Errorf("%q: want TEAM=FILE, a team name and the file of its key (`remem team-key TEAM` makes one)", e)
		case keys[team] != nil:
			return nil, fmt.Errorf("team %s has two keys; keep one (every member must use the same)", team)
		}
		key, err := readKey32(file, "the team key of "+team, "`remem team-key "+team+"`, or take the one a teammate made")
		if err != nil {
			return nil, err
		}
		keys[team] = key
	}
	return keys, nil
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
