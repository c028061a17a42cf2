package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/folder"
	"github.com/remem/remem/internal/display"
)

func folderCommand() *cli.Command {
	return &cli.Command{
		Name:  "folder",
		Usage: "exchange records through a shared folder",
		Subcommands: []*cli.Command{{
			Name:  "sync",
			Usage: "write this memory's file into DIR and read every other memory's file there",
			UsageText: `remem folder sync [--watch] [--interval 2s] [--json] DIR

DIR/<origin>.jsonl holds this memory's records; it is replaced atomically and
no other file is touched. Every other <16 hex>.jsonl is read, every line
verified (a line whose origin differs from its file name is refused) and
merged. A damaged file is reported and its good lines still taken.

While a node runs on the home, the node syncs: DIR must then be one of its
folders (config.toml's folders, or --folder), and another is refused with
how to add it; the node's API never syncs a directory a request names.

Examples:
  remem folder sync ~/Dropbox/remem
  remem folder sync --watch /mnt/team-share/remem`,
			Flags: []cli.Flag{jsonFlag,
				&cli.BoolFlag{Name: "watch", Usage: "keep syncing when files in DIR change"},
				&cli.DurationFlag{Name: "interval", Value: 2 * time.Second, Usage: "how often --watch looks for changes"}},
			Action: folderSync,
		}},
	}
}

func folderSync(c *cli.Context) (err error) {
	dir, err := oneArg(c, "DIR")
	if err != nil {
		return err
	}
	// Through a running node the node writes and reads the folder, if it
	// is one of the node's; its working directory is not this one.
	dir = absDir(dir)
	svc, err := openService(c)
	if err != nil {
		return err
	}
	defer closeInto(&err, svc)
	once := func() error {
		res, err := svc.SyncFolder(c.Context, dir)
		if c.Bool("json") {
			if perr := printJSONLine(c.App.Writer, res); perr != nil {
				return perr
			}
		} else {
			for _, r := range res.Report.Refused {
				fmt.Fprintln(c.App.ErrWriter, "refused:", display.Text(fmt.Sprint(r)))
			}
			fmt.Fprintf(c.App.Writer, "%s: wrote own file: %v; read %d files: accepted %d, refused %d, failed %d\n",
				time.Now().Format(time.TimeOnly), res.Wrote, res.Report.Files, res.Report.Accepted, len(res.Report.Refused), res.Report.Failed)
		}
		return err
	}
	if err := once(); err != nil || !c.Bool("watch") {
		return err
	}
	w, err := folder.NewWatcher(dir, c.Duration("interval"), func() {
		if err := once(); err != nil {
			fmt.Fprintln(c.App.ErrWriter, "sync failed (will retry on the next change):", display.Text(err.Error()))
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "watching %s (Ctrl-C stops)\n", dir)
	return w.Run(c.Context)
}
