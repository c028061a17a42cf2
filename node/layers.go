package node

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Composition (SPEC §9). A memory's view is the lessons it holds (common,
// domain and personal, from its records) with layer files laid over them: a
// lessons.jsonl named in the configuration (Config.Layers, config.toml's
// `layers`) or by a command's --layer. A layer file carries texts and
// strengths only; state, provenance and revocation always come from the
// records held. ComposeLayers is the one implementation: the memory uses it
// for every reader, and a command that names a --layer while a node runs
// uses it over what the node's API answers.

// Layer is a lessons.jsonl read as a layer: its name and its lessons.
type Layer struct {
	Name    string
	Lessons []LayerLesson
}

// LayerLesson is what a layer file may say about a lesson: its text and how
// strongly the layer holds it. A file's state, origins and seen are not
// taken: they are the records' to say.
type LayerLesson struct {
	Hash     string
	ID       string
	Kind     string
	Text     string
	Strength float64   // within [0, 1]
	Updated  time.Time // shown for a lesson only layers hold
}

// LayerFile names a lessons.jsonl the memory composes as a layer for every
// reader. Path is absolute: the node, the commands and the MCP server run
// in different directories.
type LayerFile struct {
	Name string
	Path string
}

// MaxLayerFile is the largest lessons.jsonl ReadLayer takes: about two
// thousand lessons, more than one origin may hold (SPEC §12).
const MaxLayerFile = 1 << 20

const maxLayerName = 64

// checkLayerName says why name cannot name a layer: 1 to 64 letters,
// digits, '.', '_' or '-', and not one of the layers a memory has anyway.
func checkLayerName(name string) error {
	if name == "" || len(name) > maxLayerName || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
		return fmt.Errorf("layer name %q: want 1 to %d letters, digits, '.', '_' or '-', e.g. team", name, maxLayerName)
	}
	if name == store.LayerCommon || name == store.LayerDomain || name == store.LayerPersonal {
		return fmt.Errorf("layer name %q is a layer every memory has (common, domain, personal); give the file another name", name)
	}
	return nil
}

// ParseLayerFile reads NAME=FILE, as config.toml's `layers` and --layer
// give a layer.
func ParseLayerFile(spec string) (LayerFile, error) {
	name, path, ok := strings.Cut(spec, "=")
	if !ok || path == "" {
		return LayerFile{}, fmt.Errorf("layer %q: want NAME=FILE, e.g. team=/mnt/share/team/lessons.jsonl", spec)
	}
	if err := checkLayerName(name); err != nil {
		return LayerFile{}, err
	}
	return LayerFile{Name: name, Path: path}, nil
}

// validateLayers checks the configured layers: a good name, once each, and
// an absolute path.
func validateLayers(l *check.List, layers []LayerFile) {
	seen := map[string]bool{}
	for _, lf := range layers {
		entry := lf.Name + "=" + lf.Path
		err := checkLayerName(lf.Name)
		l.If(err != nil, "Layers", entry, fmt.Sprint(err))
		l.If(!filepath.IsAbs(lf.Path), "Layers", entry, "want NAME=FILE with an absolute path, like team=/mnt/share/team/lessons.jsonl")
		l.If(seen[lf.Name], "Layers", entry, "want one file per layer name")
		seen[lf.Name] = true
	}
}

// ReadLayer reads the lessons.jsonl at path as the layer name. Only a
// regular file of at most MaxLayerFile bytes is read: a FIFO would block the
// reader and a device such as /dev/zero would never end.
func ReadLayer(name, path string) (Layer, error) {
	if err := checkLayerName(name); err != nil {
		return Layer{}, err
	}
	if info, err := os.Stat(path); err != nil {
		return Layer{}, fmt.Errorf("layer %s: %w", name, err)
	} else if !info.Mode().IsRegular() {
		return Layer{}, fmt.Errorf("layer %s: %s is not a regular file (%v); give the path of a lessons.jsonl", name, path, info.Mode().Type())
	}
	// O_NONBLOCK: should a FIFO replace the file after the check above,
	// opening it does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Layer{}, fmt.Errorf("layer %s: %w", name, err)
	}
	defer func() { _ = f.Close() }() // read only
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return Layer{}, fmt.Errorf("layer %s: %s is not a regular file; give the path of a lessons.jsonl", name, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxLayerFile+1))
	if err != nil {
		return Layer{}, fmt.Errorf("layer %s: reading %s: %w", name, path, err)
	}
	if len(data) > MaxLayerFile {
		return Layer{}, fmt.Errorf("layer %s: %s is larger than %d bytes, more than a lessons.jsonl holds; split it into several layers", name, path, MaxLayerFile)
	}
	l, err := ParseLayer(name, data)
	if err != nil {
		return Layer{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return l, nil
}

// ParseLayer reads lessons.jsonl content as the layer name. A line that is
// not a lesson is an error; a lesson whose text instructs or carries raw
// data is left out, as from every layer.
func ParseLayer(name string, data []byte) (Layer, error) {
	if err := checkLayerName(name); err != nil {
		return Layer{}, err
	}
	layer := Layer{Name: name}
	for _, l := range protocol.SplitLines(data) {
		var ll lessonLine
		if err := json.Unmarshal(l.Bytes, &ll); err != nil {
			return Layer{}, fmt.Errorf("layer %s line %d: not a lesson: %v", name, l.N, err)
		}
		if !protocol.ValidKind(ll.Kind) || ll.Text == "" {
			return Layer{}, fmt.Errorf("layer %s line %d: a lesson needs text and a kind of error, correction or surprise", name, l.N)
		}
		if protocol.CheckAgentText(ll.Text) != nil {
			continue // instructions and raw data are refused in every layer
		}
		updated, _ := time.Parse(time.RFC3339, ll.Updated)
		layer.Lessons = append(layer.Lessons, LayerLesson{Hash: protocol.LessonHash(ll.Kind, ll.Text), ID: ll.ID, Kind: ll.Kind,
			Text: ll.Text, Strength: min(max(ll.Strength, 0), 1), Updated: updated})
	}
	return layer, nil
}

// HeldView gives the view a memory computes from the records it holds for a
// hash that is not among its lessons (a revocation may be held without the
// lesson); held is false when no record of it is held.
type HeldView func(hash string) (v LessonView, held bool, err error)

// ComposeLayers lays layers, lowest first, over held: the view of every
// lesson a memory holds, in every state. A hash in no layer is shown as
// held. For a hash held in several layers the strongest instance (text and
// strength) is shown with every layer it is in; at equal strength the lower
// instance stays, so a higher layer never overwrites a lower one. State,
// reason, author, origins, confirmers, scopes and seen are always the held
// view's: a layer brings back no revoked lesson and hides no confirmer.
// A hash that is not in held is looked up with heldView (nil: none held);
// one of which no record is held is a layer-only lesson, a candidate with
// no provenance. The result is in no particular order.
func ComposeLayers(held []LessonView, layers []Layer, heldView HeldView) ([]LessonView, error) {
	out := slices.Clone(held)
	at := make(map[string]int, len(out))
	for i, v := range out {
		at[v.Hash] = i
	}
	for _, layer := range layers {
		for _, l := range layer.Lessons {
			i, ok := at[l.Hash]
			if !ok {
				v, isHeld := LessonView{}, false
				if heldView != nil {
					var err error
					if v, isHeld, err = heldView(l.Hash); err != nil {
						return nil, err
					}
				}
				if !isHeld {
					v = layerOnly(l)
				}
				out = append(out, v)
				i = len(out) - 1
				at[l.Hash] = i
			}
			v := &out[i]
			v.Layers = uniqSorted(append(slices.Clone(v.Layers), layer.Name))
			v.Vouched = true // a layer file the person named holds it
			// A revoked or removed lesson stays at strength 0 (SPEC §9: a
			// layer never changes what the records say of it).
			if l.Strength > v.Strength && v.State.Active() {
				v.Strength, v.Text = l.Strength, l.Text
				v.StrengthReason = "from layer " + layer.Name + ": the strongest instance is shown, and this layer file gives it"
			}
			if v.Text == "" {
				v.Text = l.Text
			}
			if v.Kind == "" {
				v.Kind = l.Kind
			}
		}
	}
	return out, nil
}

// layersOf keeps, of each layer, the instances of hash.
func layersOf(layers []Layer, hash string) []Layer {
	var out []Layer
	for _, l := range layers {
		for _, ll := range l.Lessons {
			if ll.Hash == hash {
				out = append(out, Layer{Name: l.Name, Lessons: []LayerLesson{ll}})
			}
		}
	}
	return out
}

// layerOnly is the view of a lesson no record of which is held.
func layerOnly(l LayerLesson) LessonView {
	return LessonView{Hash: l.Hash, ID: l.ID, Kind: l.Kind, Text: l.Text, Strength: l.Strength, Updated: l.Updated,
		State: protocol.StateCandidate, StateReason: "only in a layer file: no record of it is held here",
		StrengthReason: "from a layer file: no record of it is held here, so the file gives its strength",
		Origins:        []string{}, Confirmers: []string{}, Verifiers: []string{}, Admitted: []string{}, Support: Support(0, 0), Layers: []string{}}
}

// layerFiles are a memory's configured layers, each read again when its
// file changes. A file that cannot be read or parsed is left out of the
// view (and logged once per change) until it can: a reader still answers.
type layerFiles struct {
	log   *slog.Logger
	mu    sync.Mutex
	files []layerState
}

type layerState struct {
	LayerFile
	info  os.FileInfo // as last read; nil: never read
	layer Layer
	ok    bool
	fault string // the last error logged
}

func newLayerFiles(files []LayerFile, log *slog.Logger) *layerFiles {
	lf := &layerFiles{log: log}
	for _, f := range files {
		lf.files = append(lf.files, layerState{LayerFile: f})
	}
	return lf
}

// current returns the layers as their files now are, lowest first.
func (lf *layerFiles) current() []Layer {
	if lf == nil || len(lf.files) == 0 {
		return nil
	}
	lf.mu.Lock()
	defer lf.mu.Unlock()
	out := make([]Layer, 0, len(lf.files))
	for i := range lf.files {
		s := &lf.files[i]
		s.refresh(lf.log)
		if s.ok {
			out = append(out, s.layer)
		}
	}
	return out
}

// refresh reads the file again when it changed since it was last read.
func (s *layerState) refresh(log *slog.Logger) {
	info, err := os.Stat(s.Path)
	if err == nil && s.info != nil && os.SameFile(info, s.info) && info.Size() == s.info.Size() && info.ModTime().Equal(s.info.ModTime()) {
		return
	}
	if err == nil {
		s.layer, err = ReadLayer(s.Name, s.Path)
	}
	if err != nil {
		s.info, s.ok = nil, false
		if msg := err.Error(); msg != s.fault {
			s.fault = msg
			log.Warn("layer left out until its file can be read", "layer", s.Name, "file", s.Path, "err", err)
		}
		return
	}
	s.info, s.ok, s.fault = info, true, ""
}
