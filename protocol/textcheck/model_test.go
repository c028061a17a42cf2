package textcheck

import (
	"math"
	"testing"
)

// TestModelFileRoundTrip: what EncodeModel writes decodes to the same
// model, and the embedded model.bin is a model of this version.
func TestModelFileRoundTrip(t *testing.T) {
	if _, err := decodeModel(modelBin); err != nil {
		t.Fatalf("model.bin: %v", err)
	}
	if _, err := decodeModel(rawModelBin); err != nil {
		t.Fatalf("rawmodel.bin: %v", err)
	}
	w := make([]float32, ModelSlots)
	w[7], w[ModelSlots-1] = 1.5, -2.25
	m, err := decodeModel(EncodeModel(0.75, w))
	if err != nil {
		t.Fatal(err)
	}
	if m.threshold != 0.75 || m.weights[7] != 1.5 || m.weights[ModelSlots-1] != -2.25 {
		t.Fatalf("round trip changed the model: %v %v %v", m.threshold, m.weights[7], m.weights[ModelSlots-1])
	}
	w[3] = float32(math.NaN())
	if _, err := decodeModel(EncodeModel(0.75, w)); err == nil {
		t.Fatal("a NaN weight was taken")
	}
	for _, bad := range [][]byte{nil, []byte(modelMagic), []byte("remem-textcheck-model-0\n"), modelBin[:len(modelBin)-1]} {
		if _, err := decodeModel(bad); err == nil {
			t.Fatalf("a file of %d bytes was taken", len(bad))
		}
	}
}

// FuzzDecodeModel: any bytes are a model or an error, never a panic.
func FuzzDecodeModel(f *testing.F) {
	f.Add([]byte(modelMagic))
	f.Add(modelBin[:len(modelMagic)+8])
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeModel(b); err == nil && len(m.weights) != ModelSlots {
			t.Fatalf("a model of %d weights", len(m.weights))
		}
	})
}
