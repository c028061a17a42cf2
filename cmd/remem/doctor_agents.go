package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/remem/remem/node/agents"
)

// agentsQuiet is how long a tool that is set up may go without a hook
// run before doctor asks whether its hooks still run.
const agentsQuiet = 7 * 24 * time.Hour

// checkAgents reports, per agent tool on PATH (or set up), whether it is
// set up for the project in dir or for the user, and what its hooks did
// lately, from the hook log.
func checkAgents(rep *doctorReport, h, dir string, now time.Time) {
	userHome, _ := os.UserHomeDir()
	activity, err := agents.ReadHookLog(h)
	if err != nil {
		rep.add("agents", checkWarn, "cannot read %s: %v", agents.HookLogFile, err)
	}
	known := agents.KnownRemem(filepath.Join(h, setupStateFile))
	if exe, err := thisRemem(); err == nil {
		known = append(known, exe)
	}
	for _, t := range agents.Tools {
		_, onPath := exec.LookPath(t.Binary)
		inProject, forUser := agents.HooksSetUp(t, dir, userHome, known...)
		if onPath != nil && !inProject && !forUser {
			continue
		}
		name := "agent " + t.Name
		var where []string
		if inProject {
			where = append(where, "this project")
		}
		if forUser {
			where = append(where, "your user")
		}
		if len(where) == 0 {
			rep.add(name, checkWarn, "%s is on PATH but not set up here: run `remem setup %s` (this project) or `remem setup %s --user`", t.Binary, t.Name, t.Name)
			continue
		}
		a := activity[t.Name]
		set := "set up for " + strings.Join(where, " and ")
		switch {
		case a.Runs == 0:
			rep.add(name, checkWarn, "%s, but its hooks never ran: start a new %s session (%s)", set, t.Title, orNone(t.Notes))
		case now.Sub(a.Last) > agentsQuiet:
			rep.add(name, checkWarn, "%s; its hooks last ran %s ago: are they still registered?", set, ago(now.Sub(a.Last)))
		default:
			detail := fmt.Sprintf("%s; hook runs: %d, the last %s ago; events reported: %d", set, a.Runs, ago(now.Sub(a.Last)), a.Events)
			if !a.LastSent.IsZero() {
				detail += fmt.Sprintf(" (last %s ago)", ago(now.Sub(a.LastSent)))
			}
			if a.Errors > 0 {
				detail += fmt.Sprintf("; %d runs met an error (see %s)", a.Errors, agents.HookLogFile)
			}
			rep.add(name, checkOK, "%s", detail)
		}
	}
}

// ago is a duration as a person says it.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "moments"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}
