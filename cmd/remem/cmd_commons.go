package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/internal/progress"
	"github.com/remem/remem/node"
)

var tokenFileFlag = &cli.StringFlag{Name: "token-file", Usage: "FILE with the bearer token (default: $REMEM_COMMONS_TOKEN)"}

func commonsCommand() *cli.Command {
	return &cli.Command{
		Name:  "commons",
		Usage: "run an HTTP commons, or push to and pull from one",
		Subcommands: []*cli.Command{
			{
				Name:  "serve",
				Usage: "serve a commons that any memory can publish to and bootstrap from",
				UsageText: `remem commons serve [--listen 127.0.0.1:8787] (--data DIR | --storage s3://BUCKET/PREFIX?endpoint=HOST:PORT) --token-file FILE [--read-token]

PUT /commons/<origin>.jsonl is accepted only when every line verifies and has
that origin (at most 1,000 records and 256 KiB); GET serves files exactly as
stored with ETags; GET /commons/index lists them (?since=RFC3339). GET /
is a short page for people, and with Accept: application/json (or
?format=json) the info document of GET /.well-known/remem: name, limits,
rates, whether GET and PUT need a token, version, and with --p2p the
libp2p host's addresses: nodes given this commons reserve a relay slot
there when they are behind NAT, and find their team's peers in its peer
directory (PUT/GET /commons/peers).
SIGINT or SIGTERM shuts it down gracefully.

With --storage the commons lives in an S3-compatible bucket (AWS S3, R2,
GCS, MinIO, ...) instead of a directory, and any number of servers on the
same bucket and prefix serve the same commons (put them behind one load
balancer). Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
(or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD), never from the URL. The URL
takes endpoint=HOST[:PORT] (default s3.amazonaws.com), region=, and
insecure=1 for plain http. Rate limits count per server.

A line of the token file is a token, or a token followed by the keys or
origins it may publish for ("TOKEN KEY-OR-ORIGIN..."). When every token is
bound so, the info document says publishers_admitted: the operator admitted
each publisher, and memories that pull count them as verifiers (SPEC §8).
A shared token admits nobody: its holder could publish for any number of
fresh keys.

Examples:
  openssl rand -hex 32 > token && remem commons serve --data /var/lib/remem-commons --token-file token
  remem commons serve --listen 0.0.0.0:8787 --data ./commons --token-file token --read-token
  remem commons serve --listen 0.0.0.0:8787 --data ./commons --token-file token --p2p /ip4/0.0.0.0/tcp/4001
  AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... remem commons serve --token-file token \
    --storage 's3://remem-commons/public?endpoint=s3.eu-west-1.amazonaws.com&region=eu-west-1'`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8787", Usage: "address to listen on"},
					&cli.StringFlag{Name: "data", Usage: "DIR for the files (kept across restarts)"},
					&cli.StringFlag{Name: "storage", Usage: "s3://BUCKET/PREFIX?endpoint=HOST:PORT&region=REGION: keep the commons in an S3-compatible bucket instead of --data"},
					&cli.StringFlag{Name: "token-file", Required: true, Usage: "FILE with the accepted bearer tokens, one per line, each optionally followed by the keys or origins it may publish for"},
					&cli.BoolFlag{Name: "read-token", Usage: "require the token on GET too"},
					&cli.StringFlag{Name: "name", Value: "remem commons", Usage: "what the front page (GET /) and the info document call this commons"},
					&cli.StringSliceFlag{Name: "p2p", Usage: "MULTIADDR: also run a libp2p host there offering a circuit relay and AutoNAT to nodes behind NAT (repeatable); it relays whole between peers registered in the directory, and within go-libp2p's default limits for anyone else"},
					&cli.StringFlag{Name: "p2p-key", Usage: "FILE holding the libp2p host's key, made when missing (default: DIR/p2p.key under --data)"},
					&cli.IntFlag{Name: "max-origins", Value: commons.DefaultMaxOrigins, Usage: "take no new origin once the commons holds N (stored ones are still replaced)"},
					&cli.Int64Flag{Name: "max-bytes", Value: commons.DefaultMaxBytes, Usage: "take no new origin once the origins' files hold N bytes (stored ones are still replaced)"},
					&cli.IntFlag{Name: "max-origins-per-token", Value: commons.DefaultMaxOriginsPerToken, Usage: "let one token store at most N new origins"},
				},
				Action: commonsServe,
			},
			{
				Name:  "push",
				Usage: "publish this memory's file to a commons",
				UsageText: `remem commons push [--token-file FILE] [--json] URL

URL is the commons' address: https://host, or the seed's
https://host/commons/ (the same commons); no other path.

Examples:
  REMEM_COMMONS_TOKEN=... remem commons push https://commons.example.org
  remem commons push --token-file ~/.remem-token http://127.0.0.1:8787`,
				Flags:  []cli.Flag{jsonFlag, tokenFileFlag},
				Action: commonsPush,
			},
			{
				Name:  "pull",
				Usage: "take the files that changed on a commons, verifying every line here",
				UsageText: `remem commons pull [--token-file FILE] [--json] URL

Reads the index, then only the files changed since the last pull, with
conditional GETs. Records arrive with scope commons:<URL>. URL is the
commons' address: https://host, or the seed's https://host/commons/ (the
same commons, with or without the slashes); no other path.

Examples:
  remem commons pull https://commons.example.org
  remem commons pull --json http://127.0.0.1:8787 | jq .accepted`,
				Flags:  []cli.Flag{jsonFlag, tokenFileFlag},
				Action: commonsPull,
			},
		},
	}
}

func commonsServe(c *cli.Context) (err error) {
	data, err := os.ReadFile(c.String("token-file"))
	if err != nil {
		return fmt.Errorf("reading tokens: %w", err)
	}
	var tokens []string
	publishers := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		tokens = append(tokens, fields[0])
		if len(fields) > 1 {
			publishers[fields[0]] = append(publishers[fields[0]], fields[1:]...)
		}
	}
	if len(tokens) == 0 {
		return fmt.Errorf("%s holds no token; write one per line (e.g. `openssl rand -hex 32 > %s`)", c.String("token-file"), c.String("token-file"))
	}
	logger := newLogger(c, slog.LevelInfo)
	cfg := commons.DefaultServerConfig()
	cfg.DataDir, cfg.Tokens, cfg.ReadNeedsToken, cfg.Logger, cfg.Name = c.String("data"), tokens, c.Bool("read-token"), logger, c.String("name")
	cfg.Publishers = publishers
	cfg.MaxOrigins, cfg.MaxBytes, cfg.MaxOriginsPerToken = c.Int("max-origins"), c.Int64("max-bytes"), c.Int("max-origins-per-token")
	where := cfg.DataDir
	if cfg.DataDir != "" && c.String("storage") != "" {
		return cli.Exit("give --data DIR or --storage URL, not both: the commons lives in one place", 2)
	}
	if cfg.DataDir == "" && c.String("storage") == "" {
		return cli.Exit("say where the commons lives: --data DIR (a directory), or --storage s3://BUCKET/PREFIX?endpoint=HOST:PORT (a bucket that several servers may share)", 2)
	}
	var registered commons.Registrations // the relay serves the peers registered in the directory
	if p2p := c.StringSlice("p2p"); len(p2p) > 0 {
		keyFile := c.String("p2p-key")
		if keyFile == "" && cfg.DataDir == "" {
			return cli.Exit("--p2p with --storage needs --p2p-key FILE: the relay's key lives on this machine, and each replica needs its own", 2)
		}
		if keyFile == "" {
			keyFile = filepath.Join(cfg.DataDir, "p2p.key")
		}
		h, err := startRelayHost(keyFile, p2p, registered.Registered, logger)
		if err != nil {
			return err
		}
		defer closeInto(&err, h)
		cfg.P2P = gossip.HostAddrs(h)
		fmt.Fprintf(c.App.ErrWriter, "relay host %s on %s\n", h.ID(), strings.Join(cfg.P2P, " "))
	}
	if c.String("storage") != "" {
		if cfg.Store, err = commons.OpenStorage(c.Context, c.String("storage")); err != nil {
			return err
		}
		where = cfg.Store.String()
	}
	srv, err := commons.NewServer(c.Context, cfg) // closes cfg.Store when it fails
	if err != nil {
		return err
	}
	defer closeInto(&err, srv)
	registered.Set(srv)
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil { // before saying "serving"
		return listenError("--listen", c.String("listen"), err)
	}
	fmt.Fprintf(c.App.ErrWriter, "commons serving %s on http://%s\n", where, ln.Addr())
	return commons.ServeListener(c.Context, ln, srv, logger)
}

// commonsRequest reads the URL argument and the token. The push or pull
// runs in this process, or in the running node that holds the home.
func commonsRequest(c *cli.Context) (node.CommonsRequest, error) {
	url, err := oneArg(c, "commons URL")
	if err != nil {
		return node.CommonsRequest{}, err
	}
	if _, err := commons.CanonicalURL(url); err != nil {
		return node.CommonsRequest{}, cli.Exit(err.Error(), 2)
	}
	token, err := commonsToken(c.String("token-file"))
	return node.CommonsRequest{URL: url, Token: token}, err
}

func commonsPush(c *cli.Context) error {
	req, err := commonsRequest(c)
	if err != nil {
		return err
	}
	return withService(c, func(svc node.Service) (commons.PushResult, error) {
		return svc.PushCommons(c.Context, req)
	}, func(res commons.PushResult) error {
		base, _ := commons.CanonicalURL(req.URL)
		skipped := ""
		if res.Skipped > 0 { // lines of a version that commons does not know: not stored there
			skipped = fmt.Sprintf("; %d lines of an unknown version skipped, not stored", res.Skipped)
		}
		_, err := fmt.Fprintf(c.App.Writer, "pushed %d records to %s (etag %s)%s\n", res.Records, base, res.ETag, skipped)
		return err
	})
}

func commonsPull(c *cli.Context) (err error) {
	req, err := commonsRequest(c)
	if err != nil {
		return err
	}
	svc, err := openService(c)
	if err != nil {
		return err
	}
	defer closeInto(&err, svc)
	ctx := c.Context
	if !c.Bool("json") {
		ctx = progress.With(ctx, func(_ string, done, total int) {
			if total >= 20 && (done%50 == 0 || done == total) {
				fmt.Fprintf(c.App.ErrWriter, "\rpulling %d/%d files", done, total)
				if done == total {
					fmt.Fprintln(c.App.ErrWriter)
				}
			}
		})
	}
	// A pull goes on past a failed file: the report says what it did, and
	// err every failure.
	rep, err := svc.PullCommons(ctx, req)
	if c.Bool("json") {
		if perr := printJSON(c.App.Writer, rep); perr != nil {
			return errors.Join(err, perr)
		}
		return err
	}
	for _, r := range rep.Refusals {
		fmt.Fprintln(c.App.ErrWriter, "refused:", display.Text(fmt.Sprint(r)))
	}
	fmt.Fprintf(c.App.Writer, "listed %d, fetched %d, unchanged %d, accepted %d records, refused %d lines, failed %d, %d bytes\n",
		rep.Listed, rep.Fetched, rep.Unchanged+rep.NotModified, rep.Accepted, sum(rep.Refused), rep.Failed, rep.Bytes)
	return err
}

func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
