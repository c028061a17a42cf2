package commons

import (
	"fmt"
	"net/url"
	"strings"
)

// CanonicalURL returns the one form of a commons' address: scheme and host
// (with a port other than the scheme's default), lowercased, with no path,
// e.g. "https://commons.example.org". A commons serves under /commons/ at
// the root of its host and the client adds that path itself, so
// "https://host", "https://host/", "https://host/commons" and
// "https://host/commons/" (the seed's form) name the same commons: the same
// scope ("commons:" + this form) and the same pull state. Any other path is
// refused, as are credentials in the URL (the token goes in a file), a
// query and a fragment.
func CanonicalURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) {
		return "", fmt.Errorf("the commons URL %q is not an http:// or https:// URL, like https://commons.example.org", raw)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch {
	case u.Hostname() == "":
		return "", fmt.Errorf("the commons URL %q names no host, like https://commons.example.org", raw)
	case u.User != nil:
		return "", fmt.Errorf("the commons URL %q holds credentials: give the token with --token-file or REMEM_COMMONS_TOKEN instead", raw)
	case u.RawQuery != "" || u.ForceQuery:
		return "", fmt.Errorf("the commons URL %q has a query: name the commons by its address alone, like https://commons.example.org", raw)
	case u.Fragment != "":
		return "", fmt.Errorf("the commons URL %q has a fragment: name the commons by its address alone, like https://commons.example.org", raw)
	}
	switch u.EscapedPath() {
	case "", "/", "/commons", "/commons/":
	default:
		return "", fmt.Errorf("the commons URL %q has the path %q: a commons is served at the root of its host, so name it "+
			"%s://%s or %s://%s/commons/ (the client adds /commons/<origin>.jsonl itself)", raw, u.EscapedPath(), scheme, u.Host, scheme, u.Host)
	}
	if port := u.Port(); scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, nil
}
