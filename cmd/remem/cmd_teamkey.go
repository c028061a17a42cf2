package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/gossip"
)

func teamKeyCommand() *cli.Command {
	return &cli.Command{
		Name:  "team-key",
		Usage: "make a team's peer directory key (or show the one made before) and what teammates add",
		UsageText: `remem team-key [--json] [--out FILE] TEAM

A commons' peer directory lists a team's members under a hash of the team
name and this key, so nobody who only guesses the name finds them there. A
team without a key is not listed in any directory. The key goes to FILE
(default $REMEM_HOME/team-TEAM.key, readable by its owner only); a file
that exists is kept and shown again. Give the key to every member of the
team privately, as you would the members list: each saves it to a file and
names it with team_keys (or remem node --team-key TEAM=FILE).

Examples:
  remem team-key backend
  remem team-key --out ~/keys/ops.key ops
  remem team-key --json backend | jq -r .key`,
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "out", Usage: "FILE to write the key to (default: $REMEM_HOME/team-TEAM.key)"},
		},
		Action: runTeamKey,
	}
}

func runTeamKey(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("team-key needs one TEAM name; see `remem team-key --help`", 2)
	}
	team := c.Args().First()
	if !gossip.ValidTeamName(team) {
		return cli.Exit(fmt.Sprintf("team %q: want 1 to 128 bytes with no spaces, control characters or '/'", team), 2)
	}
	file := c.String("out")
	if file == "" {
		h := home(c)
		if fi, err := os.Stat(h); err != nil || !fi.IsDir() {
			return cli.Exit(fmt.Sprintf("no memory at %s to keep the key in: run `remem init`, set REMEM_HOME, or give --out FILE", h), 1)
		}
		file = filepath.Join(h, "team-"+team+".key")
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	key, made, err := teamKeyFile(file, team)
	if err != nil {
		return err
	}
	hexKey := hex.EncodeToString(key)
	if c.Bool("json") {
		return printJSON(c.App.Writer, struct {
			Team string `json:"team"`
			File string `json:"file"`
			Key  string `json:"key"`
			Made bool   `json:"made"`
		}{team, file, hexKey, made})
	}
	w := c.App.Writer
	if made {
		fmt.Fprintf(w, "The directory key of team %s is in %s (mode 0600).\n", team, file)
	} else {
		fmt.Fprintf(w, "Team %s already has a directory key in %s; kept.\n", team, file)
	}
	fmt.Fprintf(w, "\nThis node uses it with:\n  remem config set team_keys %s=%s\n", team, file)
	fmt.Fprintf(w, "(team_keys is a list: name every team's key in one set, or use remem node --team-key %s=%s)\n", team, file)
	fmt.Fprintf(w, "\nSend each teammate this key privately, as you would the members list:\n  %s\n", hexKey)
	fmt.Fprintf(w, "A teammate saves it and names it:\n  umask 077; echo %s > team-%s.key\n  remem config set team_keys %s=$PWD/team-%s.key\n", hexKey, team, team, team)
	return nil
}

// teamKeyFile reads the key in file, or makes one there (mode 0600, never
// replacing a file); made says which.
func teamKeyFile(file, team string) (key []byte, made bool, err error) {
	if _, err := os.Stat(file); err == nil {
		key, err := readKey32(file, "the team key of "+team, "`remem team-key --out NEWFILE "+team+"`")
		return key, false, err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("reading the team key: %w", err)
	}
	key = make([]byte, commons.TeamKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("writing the team key: %w", err)
	}
	if _, err := fmt.Fprintln(f, hex.EncodeToString(key)); err != nil {
		_ = f.Close() // the write's error is the one to report
		return nil, false, fmt.Errorf("writing the team key to %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return nil, false, fmt.Errorf("writing the team key to %s: %w", file, err)
	}
	return key, true, nil
}
