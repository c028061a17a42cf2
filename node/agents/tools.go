package agents

import (
	"fmt"
	"sort"
	"strings"
)

// hookKind is what remem does with one of a tool's hook events.
type hookKind int

const (
	hookNone         hookKind = iota
	hookSessionStart          // print the project's lessons
	hookPrompt                // the person's prompt: a correction?
	hookToolDone              // a call finished: did it fail?
	hookToolFailed            // a call failed
)

// Tool is one agent tool remem sets up and reads hooks from. Each field
// follows the tool's own documentation, at the version Followed names.
type Tool struct {
	Name     string // remem's name of it, as `remem setup NAME` takes it
	Title    string // as people write it
	Binary   string // its command on PATH
	Followed string // the documentation the formats follow

	events   map[string]hookKind // the tool's hook event names
	readOnly map[string]bool     // tools whose failures are no surprise

	// Where setup writes, relative to the project or to the user's home.
	mcpFile, mcpUserFile string // "" where the tool's own CLI registers it
	mcpTOML              bool   // Codex: [mcp_servers.remem] in TOML
	hooksFile            string
	hooksUserFile        string
	instructions         string // the instruction file in a project
	userInstructions     string
	hooks                []hookGroup
	timeoutUnit          int  // the hook timeout's unit per second (1 or 1000)
	hookNames            bool // Gemini CLI names each hook
	// transcripts is where, under the user's home, the tool keeps its
	// session transcripts ("" where remem does not read them).
	transcripts string
	// Notes and UserNotes say what the tool asks of the person after a
	// project's setup, and after the user's.
	Notes, UserNotes string
}

// hookGroup is one event setup registers, with its matcher ("" for none).
type hookGroup struct{ event, matcher string }

// hookTimeoutSeconds bounds a remem hook in the tool: it answers within
// milliseconds, and a node that hangs must not hold the agent long.
const hookTimeoutSeconds = 10

var claudeCode = &Tool{
	Name: "claude-code", Title: "Claude Code", Binary: "claude",
	Followed: "code.claude.com/docs/en/hooks, /mcp and /memory as of Claude Code v2.1.64 (2026)",
	events: map[string]hookKind{"SessionStart": hookSessionStart, "UserPromptSubmit": hookPrompt,
		"PostToolUse": hookToolDone, "PostToolUseFailure": hookToolFailed},
	readOnly: set("Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "NotebookRead",
		"BashOutput", "ExitPlanMode", "ListMcpResourcesTool", "ReadMcpResourceTool", "Task", "AskUserQuestion"),
	mcpFile: ".mcp.json", hooksFile: ".claude/settings.json", hooksUserFile: ".claude/settings.json",
	instructions: "CLAUDE.md", userInstructions: ".claude/CLAUDE.md",
	// A failed call comes as PostToolUseFailure; PostToolUse is read for
	// the calls that report a failure in their result (an MCP tool's
	// isError, a Write's success: false), not for every read.
	hooks: []hookGroup{{"SessionStart", ""}, {"UserPromptSubmit", ""}, {"PostToolUseFailure", "*"},
		{"PostToolUse", "Bash|Write|Edit|MultiEdit|NotebookEdit|mcp__.*"}},
	timeoutUnit: 1, transcripts: ".claude/projects",
	Notes: "Claude Code asks once before it uses the project's .mcp.json servers.",
}

var codex = &Tool{
	Name: "codex", Title: "Codex CLI", Binary: "codex",
	Followed: "developers.openai.com/codex config and hooks reference, codex-cli 0.130 and later (2026)",
	events: map[string]hookKind{"SessionStart": hookSessionStart, "UserPromptSubmit": hookPrompt,
		"PostToolUse": hookToolDone},
	readOnly: set("read_file", "list_dir", "grep_files", "view_image", "web_search", "update_plan"),
	mcpFile:  ".codex/config.toml", mcpUserFile: ".codex/config.toml", mcpTOML: true,
	hooksFile: ".codex/hooks.json", hooksUserFile: ".codex/hooks.json",
	instructions: "AGENTS.md", userInstructions: ".codex/AGENTS.md",
	// PostToolUse comes after every call, failed or not: Codex has no
	// failure event, and a shell's exit status is in its output's text.
	hooks:       []hookGroup{{"SessionStart", ""}, {"UserPromptSubmit", ""}, {"PostToolUse", "Bash|shell|exec_command|apply_patch|mcp__.*"}},
	timeoutUnit: 1, transcripts: ".codex/sessions",
	Notes: "Codex runs a new hook only after you trust it: open codex and review the hooks (/hooks). A project's .codex/ is read only in a trusted project.",
}

var geminiCLI = &Tool{
	Name: "gemini-cli", Title: "Gemini CLI", Binary: "gemini",
	Followed: "google-gemini/gemini-cli docs/hooks and docs/reference/configuration.md, v0.56 (2026-08)",
	events: map[string]hookKind{"SessionStart": hookSessionStart, "BeforeAgent": hookPrompt,
		"AfterTool": hookToolDone},
	readOnly: set("read_file", "read_many_files", "glob", "search_file_content", "grep", "list_directory",
		"google_web_search", "web_fetch", "save_memory", "write_todos"),
	mcpFile: ".gemini/settings.json", mcpUserFile: ".gemini/settings.json",
	hooksFile: ".gemini/settings.json", hooksUserFile: ".gemini/settings.json",
	instructions: "GEMINI.md", userInstructions: ".gemini/GEMINI.md",
	hooks:       []hookGroup{{"SessionStart", ""}, {"BeforeAgent", ""}, {"AfterTool", "run_shell_command|write_file|replace|mcp_.*"}},
	timeoutUnit: 1000, hookNames: true,
	Notes:     "Gemini CLI warns once before it runs a project's new hooks.",
	UserNotes: "Gemini CLI reads the hooks at the start of a session: start a new one.",
}

// Tools are the agent tools remem knows, in the order help lists them.
var Tools = []*Tool{claudeCode, codex, geminiCLI}

// Find returns the tool called name, or an error that lists them.
func Find(name string) (*Tool, error) {
	for _, t := range Tools {
		if t.Name == name || t.Binary == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no agent tool %q: remem sets up %s", name, Names())
}

// Names lists the tools' names.
func Names() string {
	var n []string
	for _, t := range Tools {
		n = append(n, t.Name)
	}
	return strings.Join(n, ", ")
}

// HookEvents lists the tool's hook events remem reads, sorted.
func (t *Tool) HookEvents() []string {
	var out []string
	for e := range t.events {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
