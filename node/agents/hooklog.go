package agents

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// HookLogFile, in the memory's home, keeps a line per hook run: a hook
// prints nothing a tool could misread, so this is where a person (and
// `remem doctor`) sees what hooks did.
const HookLogFile = "hook.log"

// maxHookLog bounds the log; past it the log starts again, with the last
// one kept as hook.log.1.
const maxHookLog = 512 << 10

// HookRun is one line of the hook log.
type HookRun struct {
	At    time.Time `json:"at"`
	Tool  string    `json:"tool"`
	Event string    `json:"event,omitempty"`
	Why   string    `json:"why"`
	// Sent says where an event went: "api" (the running node), "inbox",
	// or "" when there was none.
	Sent    string  `json:"sent,omitempty"`
	Lessons int     `json:"lessons,omitempty"` // printed into the tool's context
	Ms      float64 `json:"ms"`
	Error   string  `json:"error,omitempty"`
}

// LogHookRun appends r to home's hook log; a log that cannot be written
// costs nothing but the line.
func LogHookRun(home string, r HookRun) {
	path := filepath.Join(home, HookLogFile)
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxHookLog {
		_ = os.Rename(path, path+".1")
	}
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(line, '\n')) // one write: whole lines even when hooks run side by side
	_ = f.Close()
}

// ToolActivity is what the hook log says of one tool.
type ToolActivity struct {
	Runs     int       `json:"runs"`
	Events   int       `json:"events"` // reported to the memory
	Errors   int       `json:"errors"`
	Last     time.Time `json:"last"`
	LastSent time.Time `json:"last_sent,omitzero"`
}

// ReadHookLog sums the hook log (and the one before it) per tool.
func ReadHookLog(home string) (map[string]ToolActivity, error) {
	out := map[string]ToolActivity{}
	for _, name := range []string{HookLogFile + ".1", HookLogFile} {
		f, err := os.Open(filepath.Join(home, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r HookRun
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			a := out[r.Tool]
			a.Runs++
			if r.Error != "" {
				a.Errors++
			}
			if r.At.After(a.Last) {
				a.Last = r.At
			}
			if r.Sent != "" {
				a.Events++
				if r.At.After(a.LastSent) {
					a.LastSent = r.At
				}
			}
			out[r.Tool] = a
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
