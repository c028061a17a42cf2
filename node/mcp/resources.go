package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remem/remem/node"
)

// The lessons as MCP resources: one per lesson at LessonURI, listed
// afresh on every resources/list (lessons come and go between calls, so
// they cannot be registered once), and the whole active view at ListURI.
const (
	lessonPrefix = "remem://lesson/"
	ListURI      = "remem://lessons"
	jsonMIME     = "application/json"
)

// LessonURI is the resource of the lesson with hash.
func LessonURI(hash string) string { return lessonPrefix + hash }

func (t *tools) addResources(s *sdk.Server) {
	s.AddResource(&sdk.Resource{URI: ListURI, Name: "lessons", Title: "The lesson view",
		Description: "Every active lesson this memory holds, strongest first, as the lessons tool gives them.", MIMEType: jsonMIME},
		t.readList)
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: lessonPrefix + "{hash}", Name: "lesson", Title: "One lesson's provenance",
		Description: "One lesson with every record held for it, as the show tool gives it.", MIMEType: jsonMIME},
		t.readLesson)
	s.AddReceivingMiddleware(t.listLessons)
}

func (t *tools) readList(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	var views []node.LessonView
	if err := t.with(ctx, func(svc node.Service) (err error) {
		views, err = svc.Lessons(ctx, node.Filter{})
		return err
	}); err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, listOutput(views))
}

func (t *tools) readLesson(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	hash := strings.TrimPrefix(req.Params.URI, lessonPrefix)
	var p node.Provenance
	err := t.with(ctx, func(svc node.Service) (err error) {
		p, err = svc.Show(ctx, hash)
		return err
	})
	if errors.Is(err, node.ErrUnknownLesson) {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	if err != nil {
		return nil, err
	}
	// What the show tool gives: no signed line, no unknown member (SPEC §6).
	return jsonContents(req.Params.URI, provenanceOf(p))
}

func jsonContents(uri string, v any) (*sdk.ReadResourceResult, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: jsonMIME, Text: string(data)}}}, nil
}

// listLessons appends a resource per active lesson to the first page of
// resources/list.
func (t *tools) listLessons(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*sdk.ListResourcesResult)
		if method != "resources/list" || err != nil || !ok {
			return res, err
		}
		if p, _ := req.GetParams().(*sdk.ListResourcesParams); p != nil && p.Cursor != "" {
			return res, nil
		}
		var views []node.LessonView
		if err := t.with(ctx, func(svc node.Service) (err error) {
			views, err = svc.Lessons(ctx, node.Filter{})
			return err
		}); err != nil {
			return nil, err
		}
		for _, v := range views {
			lr.Resources = append(lr.Resources, &sdk.Resource{URI: LessonURI(v.Hash), Name: v.Hash, Title: Observation(v),
				Description: "state " + string(v.State) + ", strength " + strconv.FormatFloat(round(v.Strength), 'f', -1, 64), MIMEType: jsonMIME})
		}
		return lr, nil
	}
}

// addContextPrompt offers `remem context` as the prompt "context": the
// lessons worth putting before an agent working in a project.
func (t *tools) addContextPrompt(s *sdk.Server) {
	s.AddPrompt(&sdk.Prompt{Name: "context", Title: "Observations for this project",
		Description: "The lessons relevant to a project, then the strongest held, framed as observations (as remem context prints them).",
		Arguments: []*sdk.PromptArgument{
			{Name: "cwd", Description: "the project directory, an absolute path (default: the server's working directory)"},
			{Name: "limit", Description: "at most this many lessons (default 10)"},
			{Name: "budget", Description: "at most this many characters of Markdown (default 2000)"},
		}}, t.contextPrompt)
}

func (t *tools) contextPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	args := req.Params.Arguments
	limit, err := intArg(args, "limit", 10)
	if err != nil {
		return nil, err
	}
	budget, err := intArg(args, "budget", 2000)
	if err != nil {
		return nil, err
	}
	dir := strings.TrimSpace(args["cwd"])
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if !filepath.IsAbs(dir) {
		return nil, errors.New(`the argument "cwd" must be an absolute path, like /home/me/src/project`)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, errors.New(`the argument "cwd" is not a directory: ` + dir)
	}
	var views []node.LessonView
	if err := t.with(ctx, func(svc node.Service) (err error) {
		views, err = PickContext(ctx, svc, ProjectQuery(dir), limit, nil)
		return err
	}); err != nil {
		return nil, err
	}
	views = FitBudget(views, budget)
	body := ContextMarkdown(views)
	if len(views) == 0 {
		body = ContextHead() + "No lesson is held here yet.\n"
	}
	return &sdk.GetPromptResult{Description: strconv.Itoa(len(views)) + " lessons for " + dir,
		Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: body}}}}, nil
}

// intArg reads a prompt argument (prompt arguments are strings) as a
// positive number.
func intArg(args map[string]string, name string, def int) (int, error) {
	s := strings.TrimSpace(args[name])
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, errors.New(`the argument "` + name + `" must be a positive whole number, not ` + strconv.Quote(s))
	}
	return n, nil
}
