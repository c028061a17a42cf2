package node

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

func TestZZDraftLines(t *testing.T) {
	f, err := os.Open("calibrate/testdata/clusters_b29i.jsonl")
	if err != nil {
		t.Skip()
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			ID     string
			Events []protocol.Event
		}
		_ = json.Unmarshal(sc.Bytes(), &r)
		if r.ID != os.Getenv("ZZROW") {
			continue
		}
		var eps []consolidate.Episode
		for _, i := range []int{0, 2} {
			e := r.Events[i]
			eps = append(eps, consolidate.Episode{Kind: e.Kind, Title: e.Title, Happened: e.Happened, Text: e.Text})
		}
		dw := &consolidate.DefaultWriter{Redact: protocol.RedactRawData}
		c := consolidate.Cluster{Kind: "error", Episodes: eps}
		s, _ := dw.Write(t.Context(), c)
		lines := dw.Untold(c, s)
		base := strings.TrimRight(s, ". ") + "." + untoldLead
		var kept []string
		for _, l := range lines {
			try := base + strings.Join(append(kept, l), "; ") + "."
			err := protocol.CheckLessonText(try)
			fmt.Printf("LINE %q -> %v\n", l, err)
			if err == nil {
				kept = append(kept, l)
			}
		}
	}
}
