package node

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/remem/remem/internal/atomicfile"
)

// APITokenFile holds the bearer token of the node's local API, in the
// memory's home, mode 0600. Any process of the machine can reach the API;
// only the person's own processes can read the home, so the token is what
// tells the person's CLI, MCP server and page from another user's.
const APITokenFile = "api-token"

// tokenQueryNames are query parameters a caller may put a token in; the
// API refuses them (a URL ends up in logs and histories).
var tokenQueryNames = []string{"token", "access_token", "api_token"}

// newAPIToken is 32 random bytes in hex.
func newAPIToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return hex.EncodeToString(b)
}

// makeAPIToken writes a new token into home unless one is there already:
// written whole to a temp file, then linked into place, so two processes
// making it at once agree on one and no reader sees half a token.
func makeAPIToken(home string) error {
	path := filepath.Join(home, APITokenFile)
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	f, err := os.CreateTemp(home, "."+APITokenFile+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("making the API token %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // linked or failed: the temp name goes
	_, werr := f.WriteString(newAPIToken() + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("making the API token %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("making the API token %s: %w", path, err)
	}
	return atomicfile.SyncDir(home)
}

// openAPIToken returns home's API token for the memory that holds the home,
// making one when there is none, and a new one, said in the log, when the
// file is damaged or its mode lets other users read it: they may have read
// it, so it is no secret any more.
func openAPIToken(home string, log *slog.Logger) (string, error) {
	if err := makeAPIToken(home); err != nil {
		return "", err
	}
	token, err := ReadAPIToken(home)
	if err == nil {
		return token, nil
	}
	var exposed *exposedTokenError
	if !errors.As(err, &exposed) && !errors.Is(err, errDamagedToken) {
		return "", err
	}
	token = newAPIToken()
	if err := atomicfile.Write(filepath.Join(home, APITokenFile), "", []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("replacing the API token: %w", err)
	}
	log.Warn("replaced the local API's token with a new one in mode 0600; the old one no longer works (`remem web` prints the page's new link)", "why", err.Error())
	return token, nil
}

// exposedTokenError: the token file's mode lets other users read it.
type exposedTokenError struct {
	path string
	mode fs.FileMode
}

func (e *exposedTokenError) Error() string {
	return fmt.Sprintf("the API token %s has mode %04o, so other users can read it; restart the node: it replaces the token with a new one in mode 0600", e.path, e.mode)
}

var errDamagedToken = errors.New("damaged")

// ReadAPIToken reads home's API token, refusing a file other users can
// read: a client must not send a token others may have.
func ReadAPIToken(home string) (string, error) {
	path := filepath.Join(home, APITokenFile)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no API token at %s: a node makes it when it starts; if this node runs an older remem, restart it", path)
	}
	if err != nil {
		return "", fmt.Errorf("reading the API token: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "", &exposedTokenError{path: path, mode: info.Mode().Perm()}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the API token: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if len(token) < 32 || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("the API token %s is %w: restart the node, which makes a new one", path, errDamagedToken)
	}
	return token, nil
}

// authorize checks that r carries token as "Authorization: Bearer TOKEN",
// comparing in constant time. Cookies are never read: a browser sends them
// on requests other sites make.
func authorize(r *http.Request, token []byte) error {
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	got = strings.TrimSpace(got)
	switch {
	case got == "" || !strings.EqualFold(scheme, "Bearer"):
		return errors.New("this route needs the node's API token: send `Authorization: Bearer TOKEN` with the token in the memory's home ($REMEM_HOME/" + APITokenFile + "); the remem CLI and MCP server send it themselves, and `remem web` prints the page's link")
	case len(token) == 0 || subtle.ConstantTimeCompare([]byte(got), token) != 1:
		return errors.New("the API token sent is not this node's: send the one in $REMEM_HOME/" + APITokenFile + ", which the node read when it started (`remem web` prints the page's link with it)")
	}
	return nil
}

// tokenInQuery refuses a URL that carries a token: tokens go in the
// Authorization header, never in a URL that logs and histories keep.
func tokenInQuery(r *http.Request) error {
	q := r.URL.Query()
	for _, name := range tokenQueryNames {
		if q.Has(name) {
			return fmt.Errorf("the query carries %q: a token never goes in a URL (logs and browser histories keep URLs); send it as `Authorization: Bearer TOKEN`, and open the page with the link `remem web` prints (the token after #); if this was the node's token, delete $REMEM_HOME/%s and restart the node for a new one", name, APITokenFile)
		}
	}
	return nil
}
