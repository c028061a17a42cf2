package node

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// ProjectShare is the opt-in of one project (SPEC §6): error lessons are
// shared once a project opts in; corrections and surprises only when turned
// on explicitly.
type ProjectShare struct {
	Project     string `json:"project"`
	Corrections bool   `json:"corrections"`
	Surprises   bool   `json:"surprises"`
}

// ShareSettings are every project's opt-in.
type ShareSettings struct {
	Projects []ProjectShare `json:"projects"`
}

// Allows reports whether a lesson of kind whose text was written from
// events in projects may be signed and published: every one of them must
// be opted in for kind, since the sentence may name any one's details. An
// empty project (events without a cwd) is opted in nowhere, nor is an
// empty list.
func (s ShareSettings) Allows(kind string, projects []string) bool {
	for _, dir := range projects {
		if !s.allowsDir(kind, dir) {
			return false
		}
	}
	return len(projects) > 0
}

// allowsDir reports whether a project that holds dir is opted in for kind.
func (s ShareSettings) allowsDir(kind, dir string) bool {
	if dir == "" {
		return false
	}
	for _, p := range s.Projects {
		if !within(dir, p.Project) {
			continue
		}
		switch kind {
		case protocol.KindError:
			return true
		case protocol.KindCorrection:
			if p.Corrections {
				return true
			}
		case protocol.KindSurprise:
			if p.Surprises {
				return true
			}
		}
	}
	return false
}

// writtenFrom are the projects whose events l's text was written from;
// a lesson stored before they were kept falls back to every project it
// came from.
func writtenFrom(l store.Lesson) []string {
	if len(l.WrittenFrom) > 0 {
		return l.WrittenFrom
	}
	return l.Projects
}

func within(dir, project string) bool {
	dir, project = filepath.Clean(dir), filepath.Clean(project)
	return dir == project || strings.HasPrefix(dir, project+string(filepath.Separator))
}

const shareKey = "share"

// ShareSettings reads the opt-ins.
func (m *Memory) ShareSettings() (ShareSettings, error) {
	var s ShareSettings
	_, err := m.store.GetMeta(shareKey, &s)
	return s, err
}

// Share opts a project in (or updates its switches).
func (m *Memory) Share(p ProjectShare) (ShareSettings, error) {
	abs, err := filepath.Abs(p.Project)
	if err != nil {
		return ShareSettings{}, err
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return ShareSettings{}, fmt.Errorf("project %s is not a directory; give the directory your agents work in (the cwd of their events)", p.Project)
	}
	p.Project = abs
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	s, err := m.ShareSettings()
	if err != nil {
		return s, err
	}
	s.Projects = removeProject(s.Projects, abs)
	s.Projects = append(s.Projects, p)
	sort.Slice(s.Projects, func(i, j int) bool { return s.Projects[i].Project < s.Projects[j].Project })
	if err := m.store.SetMeta(shareKey, s); err != nil {
		return s, err
	}
	return s, m.markShareable(s)
}

// markShareable marks for signing the own lessons kept local so far that
// the opt-ins s now allow, so that the next sleep publishes the lessons
// written before their project opted in, as `remem share` says.
func (m *Memory) markShareable(s ShareSettings) error {
	lessons, err := m.store.OwnLessons()
	if err != nil {
		return err
	}
	var steps []store.Step
	for _, l := range lessons {
		if l.Published || l.Dirty || l.Draft != "" || !s.Allows(l.Kind, writtenFrom(l)) {
			continue
		}
		l.Dirty = true
		steps = append(steps, store.Step{Lesson: l})
	}
	if len(steps) == 0 {
		return nil
	}
	return m.store.Commit(steps...)
}

// Unshare opts a project out. Lessons already published stay published
// until revoked.
func (m *Memory) Unshare(project string) (ShareSettings, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return ShareSettings{}, err
	}
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	s, err := m.ShareSettings()
	if err != nil {
		return s, err
	}
	before := len(s.Projects)
	s.Projects = removeProject(s.Projects, abs)
	if len(s.Projects) == before {
		return s, fmt.Errorf("project %s was not shared; `remem share --list` shows the shared ones", abs)
	}
	return s, m.store.SetMeta(shareKey, s)
}

func removeProject(ps []ProjectShare, abs string) []ProjectShare {
	out := ps[:0]
	for _, p := range ps {
		if p.Project != abs {
			out = append(out, p)
		}
	}
	return out
}
