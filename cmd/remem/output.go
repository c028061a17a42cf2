package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/internal/display"

	"github.com/remem/remem/node"
)

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON for programs"}

func defaultHome() string { return node.DefaultHome() }

func home(c *cli.Context) string {
	h := c.String("home")
	if abs, err := filepath.Abs(h); err == nil {
		return abs
	}
	return h
}

// printJSON writes v as indented JSON, or one line when compact.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// rawOut is stdout without the display net, for data whose bytes must stay
// exact: signed record lines, which an escape would break.
func rawOut(c *cli.Context) io.Writer {
	if d, ok := c.App.Writer.(*display.Writer); ok {
		return d.Raw()
	}
	return c.App.Writer
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// readInput reads FILE, or stdin when the argument is "-" or missing.
func readInput(c *cli.Context) (string, []byte, error) {
	name := c.Args().First()
	if name == "" || name == "-" {
		data, err := io.ReadAll(os.Stdin)
		return "stdin", data, err
	}
	data, err := os.ReadFile(name)
	if err != nil {
		// os's error names the file and the call already ("open X: no
		// such file or directory"); say only what was being done.
		return name, nil, fmt.Errorf("reading input: %w", err)
	}
	return name, data, nil
}

// oneArg returns the single positional argument or a usage error.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", cli.Exit(fmt.Sprintf("%s needs exactly one %s (got %d); see `remem %s --help`", c.Command.Name, what, c.NArg(), c.Command.Name), 2)
	}
	return c.Args().First(), nil
}

// short is s escaped for one table cell, cut to n characters.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(display.Text(s)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func joinArgs(c *cli.Context) string { return strings.Join(c.Args().Slice(), " ") }
