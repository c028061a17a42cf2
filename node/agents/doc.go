// Package agents is what remem knows of the agent tools it works beside
// (Claude Code, Codex, Gemini CLI): where each reads its MCP servers, hooks
// and instruction file, and what each hook payload says. `remem setup`
// writes those files through it, and `remem hook` reads the payloads.
package agents
