package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/sjson"
)

// jsonDoc edits a tool's JSON configuration in place: sjson changes only
// the bytes of the keys it sets or deletes, so every key remem did not
// write stays as the person wrote it, and a removal gives back the file's
// bytes. A file laid out as the tools write theirs (two-space indent) is
// laid out so again after the edit.
type jsonDoc struct {
	path    string
	data    []byte
	created []string // the containers this edit created, for the record
	pretty  bool
	tail    []byte // the white space after the object, kept out of sjson's way
	// remem names the executables that are remem beside any called
	// "remem": the one setup writes now and those it wrote before.
	remem []string
}

func newJSONDoc(path string, data []byte) (*jsonDoc, error) {
	d := &jsonDoc{path: path, data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		d.data, d.pretty = []byte("{}"), true
		return d, nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s is not plain JSON (%v): fix it, or add remem to it by hand (remem setup --dry-run shows what)", path, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("%s holds no JSON object: fix it, or add remem to it by hand (remem setup --dry-run shows what)", path)
	}
	if key := duplicateKey(data); key != "" {
		// sjson edits the first of the two, encoding/json reads the last:
		// setup would never see what it wrote.
		return nil, fmt.Errorf("%s has the key %q twice in one object: fix it, or add remem to it by hand (remem setup --dry-run shows what)", path, key)
	}
	trimmed := bytes.TrimRight(data, " \t\r\n")
	d.data, d.tail = trimmed, data[len(trimmed):]
	d.pretty = bytes.Equal(bytes.TrimRight(indented(trimmed), "\n"), trimmed)
	return d, nil
}

// duplicateKey is a key that appears twice in one object of data, or "".
func duplicateKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next string is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.key {
			if top.keys[s] {
				return s
			}
			top.keys[s] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

// indented is data laid out with two-space indents and a final newline.
func indented(data []byte) []byte {
	var b bytes.Buffer
	if json.Indent(&b, bytes.TrimSpace(data), "", "  ") != nil {
		return nil
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// get decodes the value at path (sjson's dotted syntax), or nil.
func (d *jsonDoc) get(path string) any {
	var v any
	_ = json.Unmarshal(d.data, &v)
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// has: path is a key of the document, whatever its value (null too).
func (d *jsonDoc) has(path string) bool {
	parent, key := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, key = path[:i], path[i+1:]
	}
	var m map[string]any
	if parent == "" {
		_ = json.Unmarshal(d.data, &m)
	} else {
		m = mapOf(d.get(parent))
	}
	_, ok := m[key]
	return ok
}

// ensure creates the objects and array on the way to path, and
// records each it created.
func (d *jsonDoc) ensure(path string, empty string) error {
	if v := d.get(path); v != nil {
		_, isObject := v.(map[string]any)
		_, isArray := v.([]any)
		if (empty == "{}" && !isObject) || (empty == "[]" && !isArray) {
			kind := map[string]string{"{}": "an object", "[]": "an array"}[empty]
			return fmt.Errorf("%s holds %s that is not %s: fix it, or add remem to it by hand (remem setup --dry-run shows what)", d.path, path, kind)
		}
		return nil
	}
	if d.has(path) {
		return fmt.Errorf("%s holds %s as null: fix it, or add remem to it by hand (remem setup --dry-run shows what)", d.path, path)
	}
	parts := strings.Split(path, ".")
	for i := 1; i < len(parts); i++ {
		if err := d.ensure(strings.Join(parts[:i], "."), "{}"); err != nil {
			return err
		}
	}
	if err := d.setRaw(path, empty); err != nil {
		return err
	}
	d.created = append(d.created, path)
	return nil
}

func (d *jsonDoc) setRaw(path, raw string) error {
	out, err := sjson.SetRawBytes(d.data, path, []byte(raw))
	if err != nil {
		return fmt.Errorf("editing %s at %s: %w", d.path, path, err)
	}
	d.data = out
	return nil
}

func (d *jsonDoc) delete(path string) error {
	out, err := sjson.DeleteBytes(d.data, path)
	if err != nil {
		return fmt.Errorf("editing %s at %s: %w", d.path, path, err)
	}
	d.data = out
	return nil
}

// bytes is the document as it is to be written.
func (d *jsonDoc) bytes() []byte {
	if d.pretty {
		if out := indented(d.data); out != nil {
			tail := d.tail
			if len(tail) == 0 { // a file that ended without a newline ends so again
				return bytes.TrimRight(out, "\n")
			}
			return append(bytes.TrimRight(out, "\n"), tail...)
		}
	}
	return append(slices.Clone(d.data), d.tail...)
}

// setServer registers remem's MCP server under mcpServers.remem. One that
// setup wrote before is brought up to date (the binary moved); one the
// person wrote that runs remem is theirs and kept; one that runs
// something else is refused.
func (d *jsonDoc) setServer(server mcpServer, rec *fileRecord) (changed bool, err error) {
	if cur := d.get("mcpServers.remem"); cur != nil {
		switch {
		case !d.isRememServer(cur):
			return false, fmt.Errorf("%s already has an MCP server named remem that runs something else: remove or rename it, then run setup again", d.path)
		case has(rec.Wrote, "server") && sameJSON(cur, server), has(rec.Kept, "server"):
			return false, nil
		case !has(rec.Wrote, "server"):
			rec.Kept = appendNew(rec.Kept, "server")
			return false, nil
		}
	}
	if err := d.ensure("mcpServers", "{}"); err != nil {
		return false, err
	}
	raw, _ := json.Marshal(server)
	rec.Wrote = appendNew(rec.Wrote, "server")
	rec.Exes = appendNew(rec.Exes, server.Command)
	return true, d.setRaw("mcpServers.remem", string(raw))
}

// removeServer takes out mcpServers.remem when setup wrote it.
func (d *jsonDoc) removeServer(rec *fileRecord) (bool, error) {
	cur := d.get("mcpServers.remem")
	if cur == nil || !d.isRememServer(cur) || !(has(rec.Wrote, "server") || rec.unknown()) {
		return false, nil
	}
	return true, d.delete("mcpServers.remem")
}

// setHook makes sure the event runs remem's hook once. A remem hook setup
// wrote with another command (the binary moved) is replaced; one the
// person wrote is theirs and kept.
func (d *jsonDoc) setHook(g hookGroup, handler hookHandler, toolName string, rec *fileRecord) (bool, error) {
	path, part := "hooks."+g.event, "hook:"+g.event
	groups, _ := d.get(path).([]any)
	for gi, grp := range groups {
		hs, _ := mapOf(grp)["hooks"].([]any)
		for hi, h := range hs {
			if !d.isRememHook(h, toolName) {
				continue
			}
			if !has(rec.Wrote, part) {
				rec.Kept = appendNew(rec.Kept, part)
				return false, nil
			}
			if sameJSON(h, handler) && sameJSON(mapOf(grp)["matcher"], matcherValue(g.matcher)) {
				return false, nil
			}
			raw, _ := json.Marshal(handler)
			exe, _ := firstWord(handler.Command)
			rec.Exes = appendNew(rec.Exes, exe)
			if err := d.setRaw(fmt.Sprintf("%s.%d.hooks.%d", path, gi, hi), string(raw)); err != nil {
				return false, err
			}
			if g.matcher != "" && len(hs) == 1 {
				m, _ := json.Marshal(g.matcher)
				return true, d.setRaw(fmt.Sprintf("%s.%d.matcher", path, gi), string(m))
			}
			return true, nil
		}
	}
	if err := d.ensure(path, "[]"); err != nil {
		return false, err
	}
	raw, _ := json.Marshal(hookGroupJSON{Matcher: g.matcher, Hooks: []hookHandler{handler}})
	rec.Wrote = appendNew(rec.Wrote, part)
	exe, _ := firstWord(handler.Command)
	rec.Exes = appendNew(rec.Exes, exe)
	return true, d.setRaw(path+".-1", string(raw))
}

func matcherValue(m string) any {
	if m == "" {
		return nil
	}
	return m
}

// removeHooks takes the remem hooks for toolName that setup wrote out of
// the event, and a group it leaves with no hook.
func (d *jsonDoc) removeHooks(event, toolName string, rec *fileRecord) (bool, error) {
	path := "hooks." + event
	if !has(rec.Wrote, "hook:"+event) && !rec.unknown() {
		return false, nil
	}
	groups, _ := d.get(path).([]any)
	changed := false
	for gi := len(groups) - 1; gi >= 0; gi-- {
		hs, _ := mapOf(groups[gi])["hooks"].([]any)
		kept := 0
		var ours []int
		for hi, h := range hs {
			if d.isRememHook(h, toolName) {
				ours = append(ours, hi)
			} else {
				kept++
			}
		}
		if len(ours) == 0 {
			continue
		}
		changed = true
		if kept == 0 {
			if err := d.delete(fmt.Sprintf("%s.%d", path, gi)); err != nil {
				return false, err
			}
			continue
		}
		slices.Reverse(ours)
		for _, hi := range ours {
			if err := d.delete(fmt.Sprintf("%s.%d.hooks.%d", path, gi, hi)); err != nil {
				return false, err
			}
		}
	}
	return changed, nil
}

// dropEmpty deletes, deepest first, the containers setup created that are
// empty now.
func (d *jsonDoc) dropEmpty(created []string) error {
	paths := slices.Clone(created)
	slices.SortFunc(paths, func(a, b string) int { return strings.Count(b, ".") - strings.Count(a, ".") })
	for _, p := range paths {
		switch v := d.get(p).(type) {
		case map[string]any:
			if len(v) == 0 {
				if err := d.delete(p); err != nil {
					return err
				}
			}
		case []any:
			if len(v) == 0 {
				if err := d.delete(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// empty: the document holds nothing.
func (d *jsonDoc) empty() bool {
	m, _ := d.get("").(map[string]any)
	if m == nil {
		var v map[string]any
		_ = json.Unmarshal(d.data, &v)
		m = v
	}
	return len(m) == 0
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

// isRememServer: an MCP server entry that runs remem's mcp command.
func (d *jsonDoc) isRememServer(v any) bool {
	m := mapOf(v)
	cmd, _ := m["command"].(string)
	args, _ := m["args"].([]any)
	return isRememBinary(cmd, d.remem) && len(args) > 0 && args[len(args)-1] == "mcp"
}

// isRememHook: a hook handler that runs `remem … hook TOOL`.
func (d *jsonDoc) isRememHook(v any, toolName string) bool {
	cmd, _ := mapOf(v)["command"].(string)
	exe, rest := firstWord(cmd)
	words := strings.Fields(rest)
	if len(words) < 2 || !isRememBinary(exe, d.remem) {
		return false
	}
	return slices.Equal(words[len(words)-2:], []string{"hook", toolName})
}

// firstWord splits a shell command into its first word, unquoted as
// shellJoin quotes it, and the rest.
func firstWord(cmd string) (string, string) {
	cmd = strings.TrimSpace(cmd)
	if strings.HasPrefix(cmd, "'") {
		var b strings.Builder
		for i := 1; i < len(cmd); i++ {
			switch {
			case strings.HasPrefix(cmd[i:], `'\''`):
				b.WriteByte('\'')
				i += 3
			case cmd[i] == '\'':
				return b.String(), cmd[i+1:]
			default:
				b.WriteByte(cmd[i])
			}
		}
		return b.String(), ""
	}
	exe, rest, _ := strings.Cut(cmd, " ")
	return strings.Trim(exe, `"`), rest
}

// isRememBinary: cmd is called remem, or is one of known.
func isRememBinary(cmd string, known []string) bool {
	base := filepath.Base(cmd)
	return base == "remem" || base == "remem.exe" || (cmd != "" && slices.Contains(known, cmd))
}
