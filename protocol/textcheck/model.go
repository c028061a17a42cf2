package textcheck

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The learned half of the observation check: a logistic regression over
// the features of features.go, trained by internal/trainmodel from the
// labelled sets in testdata/ (go generate) and read from model.bin. It
// never learns at run time. The grammar's verdict is one of its features,
// so the model decides when the grammar's reading of a clause holds
// ("Consider using --user" after "pip prints" does not) and catches the
// orders the grammar has no rule for (polite hints, "we should", passive
// duties). The hard rules (injection phrases, hidden characters, another
// language, control characters) are never left to it.

//go:embed model.bin
var modelBin []byte

// model is the decoded model.bin: a threshold on the margin, then one
// little-endian float32 weight per slot.
type model struct {
	threshold float32
	weights   []float32
}

// modelMagic opens model.bin, so a file of another layout is refused.
const modelMagic = "remem-textcheck-model-1\n"

var theModel = func() *model {
	m, err := decodeModel(modelBin)
	if err != nil {
		panic("textcheck: model.bin: " + err.Error() + "; run go generate ./protocol/textcheck")
	}
	return m
}()

// decodeModel reads a model file, refusing one of another layout or size
// and weights that are not finite numbers.
func decodeModel(b []byte) (*model, error) {
	n := 1 << modelBits
	if len(b) < len(modelMagic) || string(b[:len(modelMagic)]) != modelMagic {
		return nil, errors.New("not a model of this version")
	}
	b = b[len(modelMagic):]
	if len(b) != 4+4*n {
		return nil, fmt.Errorf("%d bytes of weights, want %d", len(b), 4+4*n)
	}
	m := &model{threshold: math.Float32frombits(binary.LittleEndian.Uint32(b)), weights: make([]float32, n)}
	b = b[4:]
	for i := range m.weights {
		w := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			return nil, fmt.Errorf("weight %d is %v", i, w)
		}
		m.weights[i] = w
	}
	if t := float64(m.threshold); math.IsNaN(t) || math.IsInf(t, 0) {
		return nil, fmt.Errorf("the threshold is %v", m.threshold)
	}
	return m, nil
}

// EncodeModel writes a model file: the trainer's output.
func EncodeModel(threshold float32, weights []float32) []byte {
	out := make([]byte, 0, len(modelMagic)+4+4*len(weights))
	out = append(out, modelMagic...)
	out = binary.LittleEndian.AppendUint32(out, math.Float32bits(threshold))
	for _, w := range weights {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(w))
	}
	return out
}

// margin is the model's score of a text, the highest of its sentences'
// (feats[ends[k-1]:ends[k]]): above the threshold it reads as an
// instruction.
func (m *model) margin(feats []uint32, ends []int) float32 {
	score, _ := m.top(feats, ends)
	return score
}

// top returns the highest segment score and the first segment that has it
// (-1 when there is none).
func (m *model) top(feats []uint32, ends []int) (score float32, seg int) {
	score, seg = float32(math.Inf(-1)), -1
	from := 0
	for k, end := range ends {
		var s float32
		for _, f := range feats[from:end] {
			s += m.weights[f]
		}
		if s > score {
			score, seg = s, k
		}
		from = end
	}
	return score, seg
}

// ModelSlots is the size of the weight table, for the trainer.
const ModelSlots = 1 << modelBits

// Features returns the feature slots the model reads for text (its
// normalised reading, with the grammar's verdict) and the end of each
// sentence's slots, for the trainer.
func Features(text string) (feats []uint32, ends []int) {
	norm, toks := readTokens(text)
	r := reader{text: norm, toks: toks}
	rule, phrase := "", ""
	if e := r.read(); e != nil {
		rule, phrase = e.Rule, e.Phrase
	}
	return appendFeatures(nil, nil, norm, toks, rule, phrase)
}

// strongest returns the word of text that weighs most toward an order, for
// the refusal's message.
func (m *model) strongest(text string, toks []token) string {
	best, at := float32(math.Inf(-1)), -1
	for i := range toks {
		t := &toks[i]
		if t.punct != 0 {
			continue
		}
		hw := t.h
		w := m.weights[slotOf(fWord, hw, 0)]
		if opensClause(toks, i) {
			w += m.weights[slotOf(fOpenWord, hw, 0)]
		}
		if w > best {
			best, at = w, i
		}
	}
	if at < 0 {
		return ""
	}
	return text[toks[at].s:toks[at].e]
}

// readTokens returns the normalised reading of text and its tokens, as the
// checks make them, for the trainer (it allocates; the checks do not).
func readTokens(text string) (norm string, toks []token) {
	norm = text
	if !isPlainASCII(text) {
		norm = normalize(text, true)
	}
	return norm, tokenize(norm, string(appendLowerASCII(nil, norm)), nil)
}

// GrammarRule returns the rule the grammar alone finds in text, or "".
func GrammarRule(text string) string {
	norm, toks := readTokens(text)
	r := reader{text: norm, toks: toks}
	if e := r.read(); e != nil {
		return e.Rule
	}
	return ""
}
