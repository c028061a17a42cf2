package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"
	calib "github.com/remem/remem/node/calibrate"
)

// runCalibrateClusters is `remem calibrate --clusters FILE`: the rows are
// scored by node/calibrate on scratch memories set up as `remem sleep`
// sets up the memory of home (memoryConfig); a bad row makes it exit 1
// after the others are reported.
func runCalibrateClusters(c *cli.Context) error {
	path := c.String("clusters")
	cfg, err := memoryConfig(c)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the clusters: %w", err)
	}
	rows, bad, err := calib.ReadRows(f)
	_ = f.Close() // read only
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	bar := newProgressBar(c.App.ErrWriter, "")
	rep, err := calib.Clusters(bar.context(c.Context), cfg, rows)
	bar.finish()
	if err != nil {
		return err
	}
	rep.AddBad(bad)
	if c.Bool("json") {
		err = printJSON(c.App.Writer, rep)
	} else {
		err = printClusters(c, rep)
	}
	if err != nil {
		return err
	}
	if n := len(rep.Bad); n > 0 {
		for _, b := range rep.Bad {
			fmt.Fprintf(c.App.ErrWriter, "%s:%d: %s\n", path, b.Line, display.Text(badReason(b)))
		}
		return cli.Exit(fmt.Sprintf("calibrate: %d of %d rows of %s could not be scored (above)", n, n+len(rep.Rows), path), 1)
	}
	return nil
}

func printClusters(c *cli.Context, rep calib.Report) error {
	w := c.App.Writer
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tlessons\tgrouping\tfacts\traw\tdrafts")
	for _, r := range rep.Rows {
		grouping := "ok"
		if !r.ExactGrouping {
			grouping = "differs"
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%d/%d\t%d\t%d\n", display.Text(r.ID), r.LessonsWritten, r.LessonsExpected, grouping,
			r.FactsKept, r.Facts, r.RawData, r.Drafts)
	}
	for _, b := range rep.Bad {
		id := b.ID
		if id == "" {
			id = fmt.Sprintf("line %d", b.Line)
		}
		fmt.Fprintf(tw, "%s\tbad row\t\t\t\t\n", display.Text(id))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t := rep.Totals
	fmt.Fprintln(w)
	fmt.Fprintf(w, "facts kept: %d of %d (%.2f)\n", t.FactsKept, t.Facts, t.FactsRatio)
	fmt.Fprintf(w, "exact grouping: %d of %d rows (%d with each group split by family of kinds: a correction never shares a lesson with an error)\n", t.ExactGrouping, t.Rows, t.ExactByFamily)
	fmt.Fprintf(w, "lessons: %d written, %d expected; %d would be signed, %d drafts\n", t.LessonsWritten, t.LessonsExpected, t.Published, t.Drafts)
	fmt.Fprintf(w, "raw data: %d lessons that would be signed hold a private string (%d of them flagged by the raw-data check)\n", t.RawData, t.RawFlagged)
	for _, r := range rep.Rows {
		for _, l := range r.Lessons {
			switch {
			case l.RawData:
				fmt.Fprintf(w, "  %s raw: %s (holds %s)\n", display.Text(r.ID), display.Text(l.Text), display.Text(fmt.Sprintf("%q", l.Private)))
			case l.Draft != "":
				fmt.Fprintf(w, "  %s draft: %s (%s)\n", display.Text(r.ID), display.Text(l.Text), display.Text(l.Draft))
			}
		}
	}
	if t.BadRows > 0 {
		fmt.Fprintf(w, "bad rows: %d (on stderr)\n", t.BadRows)
	}
	return nil
}

// badReason is why a row is bad, with its id when it has one.
func badReason(b calib.BadRow) string {
	if b.ID != "" {
		return fmt.Sprintf("row %q: %s", b.ID, b.Reason)
	}
	return b.Reason
}
