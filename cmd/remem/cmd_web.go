package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func webCommand() *cli.Command {
	return &cli.Command{
		Name:  "web",
		Usage: "print the link that opens the running node's web page, with its API token",
		UsageText: `remem web [--json]

The page asks the node's API for the lessons and the status, and the API
answers only requests that carry the token in $REMEM_HOME/api-token. The
link carries it after #, which a browser never sends to a server: the page
takes it from there, keeps it for the tab and removes it from the address
bar. Anyone with the link can use the API as you: do not paste it where
others read. ` + "`remem node`" + ` prints the same link when it starts.

Examples:
  remem web
  xdg-open "$(remem web)"`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			client, err := runningNode(c)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, struct {
					URL string `json:"url"`
				}{client.WebURL()})
			}
			_, err = fmt.Fprintln(c.App.Writer, client.WebURL())
			return err
		},
	}
}
