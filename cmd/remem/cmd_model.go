package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
)

var modelFlag = &cli.StringFlag{Name: "model", EnvVars: []string{"REMEM_MODEL"},
	Usage: "the model the node's sleeps ask to write lessons, rewrite drafts and judge pairs in doubt: " + modelValues()}

// modelValues lists what model takes, for messages.
func modelValues() string {
	return strings.Join(append(consolidate.ModelChoices(), "endpoint"), ", ") + " (endpoint: the chat endpoint of writer_url and writer_model)"
}

// useModel sets up cfg's model from the model setting: a model CLI
// (consolidate.CLIModel) or, for "endpoint", the chat endpoint of
// writer_url, writer_model and writer_token_file as a sampler. A model
// writes the lessons, so a writer command, or writer_url with another
// model, is refused beside it.
func (s nodeSettings) useModel(cfg *node.Config, src settingSources) error {
	name := src.name("model")
	switch {
	case s.Writer != "":
		return cli.Exit(fmt.Sprintf("%s and %s are both set: a memory has one writer; keep one of them", name, src.name("writer")), usageExit)
	case s.Model == "endpoint":
		if s.WriterURL == "" {
			return cli.Exit(fmt.Sprintf("%s = \"endpoint\" asks the chat endpoint of writer_url: set it (and writer_model), e.g. `remem config set writer_url http://127.0.0.1:11434/v1`", name), usageExit)
		}
		if err := checkEndpoint(src.name("writer_url"), s.WriterURL); err != nil {
			return err
		}
		token, err := writerToken(s.WriterToken)
		if err != nil {
			return fmt.Errorf("%s: %w", src.name("writer_token_file"), err)
		}
		chat := consolidate.ChatWriter{URL: s.WriterURL, Model: s.WriterModel, APIKey: token, Timeout: time.Minute}
		cfg.Model, cfg.ModelName = chat.Ask, "endpoint"
		return nil
	case s.WriterURL != "" || s.WriterModel != "" || s.WriterToken != "":
		return cli.Exit(fmt.Sprintf("%s = %q and writer_url are both set: a memory has one writer; keep one of them, or set %s to endpoint to have writer_url's model write and judge", name, s.Model, name), usageExit)
	}
	m, err := consolidate.ParseCLIModel(s.Model)
	if err != nil {
		return cli.Exit(fmt.Sprintf("%s = %q: want one of %s", name, s.Model, modelValues()), usageExit)
	}
	cfg.Model, cfg.ModelName = m.Ask, m.Name()
	return nil
}

// foundModel is a model CLI found on PATH.
type foundModel struct {
	Tool string `json:"tool"`
	Path string `json:"path"`
	// Config is the command that makes it the memory's model.
	Config string `json:"config"`
}

// findModels lists the model CLIs on PATH, in consolidate.CLITools'
// order.
func findModels() []foundModel {
	var out []foundModel
	for _, tool := range consolidate.CLITools {
		path, err := exec.LookPath(tool)
		if err != nil {
			continue
		}
		value := tool
		switch tool {
		case "ollama":
			value = "ollama:MODEL"
		case "llm":
			value = "llm:MODEL"
		}
		out = append(out, foundModel{Tool: tool, Path: path, Config: "remem config set model " + value})
	}
	return out
}

// modelAdvice is what init and doctor say of the model CLIs found: the
// config line of the first, and how to pick a model for ollama and llm.
func modelAdvice(found []foundModel) string {
	if len(found) == 0 {
		return "no model CLI on PATH (" + strings.Join(consolidate.CLITools, ", ") + "): the default writer writes the lessons, without a model"
	}
	lines := make([]string, len(found))
	for i, f := range found {
		lines[i] = "`" + f.Config + "`"
		switch f.Tool {
		case "ollama":
			lines[i] += " (pick MODEL from `ollama list`, e.g. ollama:llama3.2)"
		case "llm":
			lines[i] += " (pick MODEL from `llm models`, e.g. llm:gpt-4o-mini)"
		}
	}
	return fmt.Sprintf("found %s on PATH; to have the node's sleeps write and judge lessons with it: %s", joinTools(found), strings.Join(lines, ", or "))
}

// modelTryTimeout bounds doctor's --try-model request.
const modelTryTimeout = 60 * time.Second

// checkModel reports the model: which one is configured and whether its
// CLI is on PATH, or which CLIs could be; with try, one tiny request and
// the time its answer took.
func checkModel(ctx context.Context, rep *doctorReport, s nodeSettings, try bool) {
	found := findModels()
	if s.Model == "" {
		status := checkOK
		if try {
			status = checkWarn
		}
		rep.add("model", status, "no model configured: %s", modelAdvice(found))
		return
	}
	var cfg node.Config
	if err := s.useModel(&cfg, settingSources{file: "config.toml", flags: map[string]bool{}}); err != nil {
		rep.add("model", checkFail, "%s", oneLine(err))
		return
	}
	where := "the chat endpoint " + s.WriterURL
	if s.Model != "endpoint" {
		m, _ := consolidate.ParseCLIModel(s.Model)
		path, err := exec.LookPath(m.Tool)
		if err != nil {
			rep.add("model", checkFail, "model %s is configured, but %s is not on PATH: install it, or `remem config set model` to one of: %s", cfg.ModelName, m.Tool, orNone(joinTools(found)))
			return
		}
		where = path
	}
	if !try {
		rep.add("model", checkOK, "model %s (%s) writes and judges lessons at each sleep; `remem doctor --try-model` sends it one request", cfg.ModelName, where)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, modelTryTimeout)
	defer cancel()
	start := time.Now()
	answer, err := cfg.Model(ctx, "You answer with one word.", "Answer with the word yes.", 4)
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		rep.add("model", checkFail, "model %s (%s) gave no answer after %s: %s", cfg.ModelName, where, took, oneLine(err))
		return
	}
	rep.add("model", checkOK, "model %s (%s) answered %q in %s", cfg.ModelName, where, excerptText(answer, 40), took)
}

func joinTools(found []foundModel) string {
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.Tool
	}
	return strings.Join(names, ", ")
}

// excerptText is s on one line, at most n runes, printable.
func excerptText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
