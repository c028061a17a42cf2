package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/node"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "read and change the settings in $REMEM_HOME/config.toml",
		UsageText: `remem config list [--json]
remem config get [--json] KEY
remem config set KEY VALUE...
remem config unset KEY

The keys are those of ` + "`remem node --help`" + `:
` + settingKeys() + `
list shows every key with its value, from config.toml or the default. set
changes one line of config.toml and leaves its comments and the other lines
as they are; a list key (teams, listen, bootstrap, members, team_keys,
folders, commons, layers) takes one or more values. A key config.toml does not know,
a value of the wrong type or a setting ` + "`remem node`" + ` would refuse is
refused, and the file is not touched. unset removes the key's line, so the
default holds again. A running node reads config.toml when it starts.

Examples:
  remem config list
  remem config set teams backend ops
  remem config set sleep 2m
  remem config get --json commons
  remem config unset mdns`,
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "every key with its value and where it comes from", Flags: []cli.Flag{jsonFlag}, Action: configList,
				UsageText: "remem config list [--json]\n\nExamples:\n  remem config list\n  remem config list --json | jq '.[] | select(.source == \"config.toml\")'"},
			{Name: "get", Usage: "one key's value (a list one item a line)", Flags: []cli.Flag{jsonFlag}, Action: configGet,
				UsageText: "remem config get [--json] KEY\n\nExamples:\n  remem config get teams\n  remem config get --json sleep"},
			{Name: "set", Usage: "set a key in config.toml, keeping the file's comments", Action: configSet,
				UsageText: "remem config set KEY VALUE...\n\nExamples:\n  remem config set sleep 2m\n  remem config set teams backend ops\n  remem config set commons https://commons.example.org"},
			{Name: "unset", Usage: "remove a key from config.toml, so its default holds", Action: configUnset,
				UsageText: "remem config unset KEY\n\nExamples:\n  remem config unset mdns"},
		},
	}
}

// configEntry is one setting as list and get show it.
type configEntry struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"` // "config.toml" or "default"
}

func configList(c *cli.Context) error {
	entries, err := configEntries(home(c))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, entries)
	}
	w := table(c.App.Writer)
	for _, e := range entries {
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Key, configText(e.Value), e.Source)
	}
	return w.Flush()
}

func configGet(c *cli.Context) error {
	key, err := oneArg(c, "KEY")
	if err != nil {
		return err
	}
	f, err := settingField(key)
	if err != nil {
		return err
	}
	entries, err := configEntries(home(c))
	if err != nil {
		return err
	}
	e := entries[slicesIndex(settingFields(), f)]
	if c.Bool("json") {
		return printJSON(c.App.Writer, e)
	}
	if list, ok := e.Value.([]string); ok {
		_, err = fmt.Fprint(c.App.Writer, strings.Join(list, "\n")+strings.Repeat("\n", min(1, len(list))))
		return err
	}
	_, err = fmt.Fprintln(c.App.Writer, configText(e.Value))
	return err
}

func slicesIndex(fields []reflect.StructField, f reflect.StructField) int {
	for i := range fields {
		if fields[i].Name == f.Name {
			return i
		}
	}
	return -1
}

// configEntries are every setting's value on home, in nodeSettings' order.
func configEntries(home string) ([]configEntry, error) {
	text, file, err := readConfig(home)
	if err != nil {
		return nil, err
	}
	s, md, err := decodeNodeSettings(file, text)
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(s)
	var out []configEntry
	for _, f := range settingFields() {
		key := f.Tag.Get("toml")
		e := configEntry{Key: key, Value: plainValue(v.FieldByIndex(f.Index)), Source: "default"}
		if md.IsDefined(key) {
			e.Source = node.ConfigFile
		}
		out = append(out, e)
	}
	return out, nil
}

// plainValue is a setting's value as JSON and the table show it: durations
// as "10m0s", lists never null, an unset threshold as the default one.
func plainValue(v reflect.Value) any {
	switch x := v.Interface().(type) {
	case duration:
		return shortDuration(time.Duration(x))
	case stringList:
		return append([]string{}, x...)
	case []string:
		return append([]string{}, x...)
	case *float64:
		if x == nil {
			return node.DefaultParams().Threshold
		}
		return *x
	}
	return v.Interface()
}

// shortDuration is d as config.toml would say it: 2m, not 2m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func configText(v any) string {
	if list, ok := v.([]string); ok {
		return strings.Join(list, ",")
	}
	return fmt.Sprint(v)
}

func configSet(c *cli.Context) error {
	if c.NArg() < 2 {
		return cli.Exit("config set needs a KEY and its VALUE, like `remem config set sleep 2m`; `remem config list` shows the keys", 2)
	}
	key := c.Args().First()
	f, err := settingField(key)
	if err != nil {
		return err
	}
	line, err := settingLine(f, c.Args().Tail())
	if err != nil {
		return err
	}
	return editConfig(home(c), key, line)
}

func configUnset(c *cli.Context) error {
	key, err := oneArg(c, "KEY")
	if err != nil {
		return err
	}
	if _, err := settingField(key); err != nil {
		return err
	}
	return editConfig(home(c), key, "")
}

// settingField is the nodeSettings field of a config.toml key; an unknown
// key is refused with the nearest known one (a flag's name, like team for
// teams, counts as near).
func settingField(key string) (reflect.StructField, error) {
	var keys []string
	for _, f := range settingFields() {
		if f.Tag.Get("toml") == key {
			return f, nil
		}
		if f.Tag.Get("flag") == key {
			return f, cli.Exit(fmt.Sprintf("unknown key %q; did you mean %q? (--%s is the flag of remem node; config.toml calls it %s)", key, f.Tag.Get("toml"), key, f.Tag.Get("toml")), 2)
		}
		keys = append(keys, f.Tag.Get("toml"))
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if near := suggest(key, keys); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return reflect.StructField{}, cli.Exit(msg+" (`remem config list` shows the keys)", 2)
}

// settingLine is `key = value` for f from the command line's values,
// typed as config.toml wants them.
func settingLine(f reflect.StructField, args []string) (string, error) {
	key := f.Tag.Get("toml")
	bad := func(want string) error {
		return cli.Exit(fmt.Sprintf("%s %s: want %s", key, strings.Join(args, " "), want), 2)
	}
	var val any
	if f.Type.Kind() == reflect.Slice {
		val = args
	} else {
		if len(args) != 1 {
			return "", bad("one value (only teams, listen, bootstrap, members, team_keys, folders, commons and layers take several)")
		}
		a := args[0]
		var err error
		switch f.Type.Kind() {
		case reflect.Bool:
			val, err = strconv.ParseBool(a)
			if err != nil {
				return "", bad("true or false")
			}
		case reflect.Int:
			val, err = strconv.Atoi(a)
			if err != nil {
				return "", bad("a whole number")
			}
		case reflect.Int64: // duration
			if _, err := time.ParseDuration(a); err != nil {
				return "", bad("a duration like 10m or 1h30m")
			}
			val = a
		case reflect.Pointer: // threshold
			val, err = strconv.ParseFloat(a, 64)
			if err != nil {
				return "", bad("a number like 0.35")
			}
		default:
			val = a
		}
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{key: val}); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// readConfig is home's config.toml ("" when there is none yet). A home
// that does not exist is refused rather than created: a mistyped --home
// should not grow a new directory.
func readConfig(home string) (text, file string, err error) {
	file = filepath.Join(home, node.ConfigFile)
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return "", file, fmt.Errorf("no memory at %s: run `remem init`, or set --home or REMEM_HOME to an existing memory", home)
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", file, nil
	}
	if err != nil {
		return "", file, fmt.Errorf("reading %s: %w", file, err)
	}
	return string(data), file, nil
}

// editConfig replaces key's assignment in home's config.toml with line
// (appends it when absent; removes it when line is empty), checks the
// result as `remem node` would, and writes it atomically. Every other
// line, comments included, stays as it was.
func editConfig(home, key, line string) error {
	text, file, err := readConfig(home)
	if err != nil {
		return err
	}
	edited, err := replaceSetting(text, key, line)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := checkSettingsText(home, file, edited); err != nil {
		return cli.Exit(err.Error()+"\nconfig.toml is unchanged", 2)
	}
	perm := os.FileMode(0o600)
	if fi, err := os.Stat(file); err == nil {
		perm = fi.Mode().Perm()
	}
	return atomicfile.Write(file, "", []byte(edited), perm)
}

// checkSettingsText refuses text unless `remem node` would start with it:
// it decodes, the files it names read, and DaemonConfig.Validate passes.
func checkSettingsText(home, file, text string) error {
	s, _, err := decodeNodeSettings(file, text)
	if err != nil {
		return err
	}
	src := settingSources{file: file, flags: map[string]bool{}}
	dc, err := s.daemonConfig(home, src, io.Discard)
	if err != nil {
		return err
	}
	if err := dc.Validate(); err != nil {
		return src.explain(err)
	}
	for _, lf := range dc.Memory.Layers {
		if _, err := node.ReadLayer(lf.Name, lf.Path); err != nil {
			return fmt.Errorf("%s: %w", src.name("layers"), err)
		}
	}
	return nil
}

var tableHeader = regexp.MustCompile(`^\s*\[`)

// replaceSetting edits TOML text line by line. The key's assignment is
// found among the top-level lines (before any [table]); its value may span
// lines (a list), and is taken to end where the text from its = on first
// parses as a TOML value. A comment after the value stays.
func replaceSetting(text, key, line string) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	assign := regexp.MustCompile(`^(\s*)("?)` + regexp.QuoteMeta(key) + `("?)\s*=`)
	end := len(lines) // where the top-level lines end
	for i, l := range lines {
		if tableHeader.MatchString(l) {
			end = i
			break
		}
		m := assign.FindStringSubmatch(l)
		if m == nil || m[2] != m[3] {
			continue
		}
		last, comment, err := valueEnd(lines[i:end], len(m[0]))
		if err != nil {
			return "", err
		}
		repl := ""
		if line != "" {
			repl = m[1] + line + comment + "\n"
		}
		return strings.Join(lines[:i], "") + repl + strings.Join(lines[i+last+1:], ""), nil
	}
	if line == "" {
		return text, nil
	}
	before := strings.Join(lines[:end], "")
	if before != "" && !strings.HasSuffix(before, "\n") {
		before += "\n"
	}
	return before + line + "\n" + strings.Join(lines[end:], ""), nil
}

// valueEnd finds where the value that starts at column col of lines[0]
// ends: the index of its last line and the comment that follows it there
// (with the spaces before it), if any.
func valueEnd(lines []string, col int) (last int, comment string, err error) {
	value := ""
	for i, l := range lines {
		if i == 0 {
			l = l[col:]
		}
		value += l
		if !parses(value) {
			continue
		}
		// The shortest prefix of the last line that still parses ends
		// the value; the rest is a comment.
		trimmed := strings.TrimRight(value, "\r\n")
		for j := strings.IndexByte(trimmed, '#'); j >= 0; {
			if parses(trimmed[:j]) {
				k := len(strings.TrimRight(trimmed[:j], " \t"))
				return i, trimmed[k:], nil
			}
			next := strings.IndexByte(trimmed[j+1:], '#')
			if next < 0 {
				break
			}
			j += 1 + next
		}
		return i, "", nil
	}
	return 0, "", errors.New("a value in this file does not parse as TOML; fix it by hand first")
}

func parses(value string) bool {
	var v map[string]any
	_, err := toml.Decode("v ="+value+"\n", &v)
	return err == nil && v["v"] != nil
}
