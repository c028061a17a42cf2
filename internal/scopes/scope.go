// Package scopes names the places records move in (SPEC: "a team gossip
// topic, a folder, or a commons") and this memory's own records, and reads
// a name back. A scope is a string wherever it goes (the store keeps it
// with each record's arrival, the API and the logs show it); this package
// alone builds and parses one, so every transport, the store, the node and
// the CLI agree on its form.
package scopes

import "strings"

// Local is the scope of this memory's own records.
const Local = "local"

const (
	teamPrefix    = "team:"
	folderPrefix  = "folder:"
	commonsPrefix = "commons:"
)

// Team is the scope of a team's gossip topic.
func Team(name string) string { return teamPrefix + name }

// Folder is the scope of a shared folder; dir is its absolute path
// (folder.Scope resolves one).
func Folder(dir string) string { return folderPrefix + dir }

// Commons is the scope of a commons; base is its canonical URL
// (commons.Client.Scope), so every spelling of one commons is one scope.
func Commons(base string) string { return commonsPrefix + base }

// Kind is what a scope names.
type Kind int

const (
	KindUnknown Kind = iota // no form this package builds
	KindLocal               // this memory's own records
	KindTeam
	KindFolder
	KindCommons
)

// Parse returns what s names and the rest of it: the team's name, the
// folder's path or the commons' URL ("" for Local and an unknown form).
func Parse(s string) (Kind, string) {
	switch {
	case s == Local:
		return KindLocal, ""
	case strings.HasPrefix(s, teamPrefix):
		return KindTeam, s[len(teamPrefix):]
	case strings.HasPrefix(s, folderPrefix):
		return KindFolder, s[len(folderPrefix):]
	case strings.HasPrefix(s, commonsPrefix):
		return KindCommons, s[len(commonsPrefix):]
	}
	return KindUnknown, ""
}

// Of is Parse's kind alone.
func Of(s string) Kind {
	k, _ := Parse(s)
	return k
}
