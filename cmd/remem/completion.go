package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// The bash and zsh scripts are urfave/cli's (autocomplete/), which ask the
// binary itself for the words (--generate-bash-completion), so they follow
// the commands and flags of the build that prints them.
const bashCompletion = `# bash completion for remem; load with: source <(remem completion bash)
_remem_complete() {
  local cur words cword
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  local opts
  if [[ "$cur" == "-"* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _remem_complete remem
`

const zshCompletion = `#compdef remem
# zsh completion for remem; load with: source <(remem completion zsh)
_remem_complete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _remem_complete remem
`

var shells = []string{"bash", "zsh", "fish"}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:  "completion",
		Usage: "print a shell completion script for bash, zsh or fish",
		UsageText: `remem completion bash|zsh|fish

Examples:
  source <(remem completion bash)          # in ~/.bashrc
  source <(remem completion zsh)           # in ~/.zshrc, after compinit
  remem completion fish > ~/.config/fish/completions/remem.fish`,
		Action: func(c *cli.Context) error {
			shell, err := oneArg(c, "shell (bash, zsh or fish)")
			if err != nil {
				return err
			}
			switch shell {
			case "bash":
				_, err = fmt.Fprint(c.App.Writer, bashCompletion)
			case "zsh":
				_, err = fmt.Fprint(c.App.Writer, zshCompletion)
			case "fish":
				var script string
				if script, err = c.App.ToFishCompletion(); err == nil {
					_, err = fmt.Fprint(c.App.Writer, script)
				}
			default:
				msg := fmt.Sprintf("no completion for shell %q; want %s", shell, strings.Join(shells, ", "))
				if s := suggest(shell, shells); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				return cli.Exit(msg, 2)
			}
			return err
		},
	}
}
