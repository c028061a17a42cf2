package mcp

import (
	"bufio"
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/internal/regularfile"
	"github.com/remem/remem/node"
)

// ContextTitle heads the Markdown a prompt receives, from `remem context`
// and from the context prompt alike.
const ContextTitle = "## Observations from other agents (remem)"

// ProjectQuery describes the project in dir for recall: the directory's
// name and the first line of its README, if any.
func ProjectQuery(dir string) string {
	parts := []string{strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(filepath.Base(dir))}
	for _, name := range []string{"README.md", "README", "README.txt", "README.rst", "readme.md", "Readme.md"} {
		if line := firstLine(filepath.Join(dir, name)); line != "" {
			parts = append(parts, line)
			break
		}
	}
	return strings.Join(parts, " ")
}

// firstLine is a file's first line with text, without Markdown heading
// marks, cut to 200 characters.
func firstLine(path string) string {
	f, err := regularfile.Open(path) // a project's README may be a FIFO or a link to a terminal
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // read only
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for n := 0; sc.Scan() && n < 50; n++ {
		line := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(sc.Text()), "#=-*"))
		if line == "" || strings.HasPrefix(line, "<") || strings.HasPrefix(line, "[![") {
			continue // blank lines, rules, HTML and badges say nothing of the project
		}
		if r := []rune(strings.Join(strings.Fields(line), " ")); len(r) > 200 {
			return string(r[:199]) + "…"
		}
		return strings.Join(strings.Fields(line), " ")
	}
	return ""
}

// PickContext takes the lessons relevant to query first, then the
// strongest of the rest, up to limit, with layers composed.
func PickContext(ctx context.Context, svc node.Service, query string, limit int, layers []node.Layer) ([]node.LessonView, error) {
	relevant, err := svc.Recall(ctx, query, limit, layers...)
	if err != nil {
		return nil, err
	}
	out := relevant
	if len(out) >= limit {
		return out[:limit], nil
	}
	have := map[string]bool{}
	for _, v := range out {
		have[v.Hash] = true
	}
	rest, err := strongest(ctx, svc, layers, limit-len(out), have)
	return append(out, rest...), err
}

// strongest is the n strongest lessons not in have, vouched first
// (node.LessonView.Vouched), the more confirmed first among equals. It
// asks for a few more lessons than it needs, and for more while lessons
// of the strength of the last one taken may be left out of what came:
// the view breaks ties by hash, not confirmations.
func strongest(ctx context.Context, svc node.Service, layers []node.Layer, n int, have map[string]bool) ([]node.LessonView, error) {
	for ask := 2*n + len(have); ; ask *= 4 {
		views, err := svc.Lessons(ctx, node.Filter{Layers: layers, Limit: ask})
		if err != nil {
			return nil, err
		}
		listed := slices.Clone(views)
		sort.SliceStable(views, func(i, j int) bool {
			a, b := views[i], views[j]
			if a.Vouched != b.Vouched {
				return a.Vouched
			}
			if a.Strength != b.Strength {
				return a.Strength > b.Strength
			}
			return Confirmations(a) > Confirmations(b)
		})
		var out []node.LessonView
		for _, v := range views {
			if len(out) >= n {
				break
			}
			if !have[v.Hash] {
				out = append(out, v)
			}
		}
		if len(listed) < ask {
			return out, nil // every lesson came
		}
		if last := listed[len(listed)-1]; len(out) == n && (out[n-1].Vouched != last.Vouched || out[n-1].Strength != last.Strength) {
			return out, nil
		}
	}
}

// ContextHead is the Markdown above the lessons.
func ContextHead() string { return ContextTitle + "\n\n" + Header + " " + MatchesNote + "\n\n" }

// MatchesNote tells the agent how to name a lesson it meets again (SPEC §2
// "matches").
const MatchesNote = "Each ends with its id: when you meet a surprise one of them describes, report it with that id as matches."

// contextLine is one lesson: its observation and its id, which an agent
// passes as "matches".
func contextLine(v node.LessonView) string {
	id := v.ID
	if id == "" {
		id = "l-" + v.Hash[:min(len(v.Hash), node.MinHashPrefix)]
	}
	return "- " + Observation(v) + " (" + display.Text(id) + ")\n"
}

// FitBudget keeps the lessons, in order, while their lines fit in budget
// characters after the header: it stops before the first that would pass it.
func FitBudget(views []node.LessonView, budget int) []node.LessonView {
	used := utf8.RuneCountInString(ContextHead())
	var out []node.LessonView
	for _, v := range views {
		n := utf8.RuneCountInString(contextLine(v))
		if used+n > budget {
			break
		}
		used += n
		out = append(out, v)
	}
	return out
}

// ContextMarkdown is the header and one line per lesson.
func ContextMarkdown(views []node.LessonView) string {
	var b strings.Builder
	b.WriteString(ContextHead())
	for _, v := range views {
		b.WriteString(contextLine(v))
	}
	return b.String()
}
