package node

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/remem/remem/protocol"
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

// Allows reports whether a lesson of kind that came from events in projects
// may be signed and published.
func (s ShareSettings) Allows(kind string, projects []string) bool {
	for _, p := range s.Projects {
		for _, dir := range projects {
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
	}
	return false
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
	return s, m.store.SetMeta(shareKey, s)
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
