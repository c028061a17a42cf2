package commons

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// S3Config is a parsed storage URL:
//
//	s3://BUCKET[/PREFIX]?endpoint=HOST[:PORT]&region=REGION[&insecure=1]
//
// The credentials are never in it (a URL is logged and shown in process
// lists): they come from the environment (s3.go).
type S3Config struct {
	Bucket   string
	Prefix   string // "" or ending in "/"
	Endpoint string // host[:port], no scheme
	Region   string // "" lets the client ask the store
	Insecure bool   // plain http (a MinIO on loopback), else https
}

// storageURLForm is what an error about a storage URL says to write.
const storageURLForm = "s3://BUCKET/PREFIX?endpoint=HOST:PORT&region=REGION (add &insecure=1 for plain http to a store on this machine)"

// ParseStorageURL reads a --storage URL strictly: anything it does not
// take is an error that says what to write instead.
func ParseStorageURL(s string) (S3Config, error) {
	bad := func(format string, args ...any) (S3Config, error) {
		return S3Config{}, fmt.Errorf("storage URL %.120q: %s; write %s", s, fmt.Sprintf(format, args...), storageURLForm)
	}
	if !strings.HasPrefix(s, "s3://") {
		return bad("only s3:// is known (a local directory is --data DIR)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("%v", err)
	}
	switch {
	case u.User != nil:
		return S3Config{}, fmt.Errorf("storage URL: credentials do not go in the URL (it is logged); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD) instead")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return bad("it has a #fragment")
	case u.Port() != "":
		return bad("the bucket %q has a port; the store's address goes in endpoint=", u.Host)
	case !validBucket(u.Host):
		return bad("%q is not an S3 bucket name (3 to 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)", u.Host)
	}
	c := S3Config{Bucket: u.Host, Endpoint: "s3.amazonaws.com"}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if len(p) > 512 {
			return bad("the prefix is over 512 bytes")
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." || !validName(seg) {
				return bad("the prefix segment %.40q is not letters, digits, '.', '_', '-' (no empty, '.' or '..' segment)", seg)
			}
		}
		c.Prefix = p + "/"
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("the query: %v", err)
	}
	for k, v := range q {
		if len(v) != 1 {
			return bad("%s= is given %d times", k, len(v))
		}
		switch val := v[0]; k {
		case "endpoint":
			if strings.Contains(val, "://") || strings.ContainsAny(val, "/?#@") {
				return bad("endpoint=%.60q must be HOST or HOST:PORT, without a scheme or path (plain http is insecure=1)", val)
			}
			host := val
			if h, port, err := net.SplitHostPort(val); err == nil {
				if port == "" || strings.Trim(port, "0123456789") != "" || len(port) > 5 {
					return bad("endpoint=%.60q has a bad port", val)
				}
				host = h
			}
			if host == "" || strings.ContainsAny(host, " \t") {
				return bad("endpoint=%.60q has no host", val)
			}
			c.Endpoint = val
		case "region":
			if len(val) > 32 || strings.Trim(val, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				return bad("region=%.40q is not a region name (lowercase letters, digits, '-')", val)
			}
			c.Region = val
		case "insecure":
			switch val {
			case "1", "true":
				c.Insecure = true
			case "0", "false":
			default:
				return bad("insecure=%.20q must be 1 or 0", val)
			}
		default:
			return bad("%.40q is not a known parameter (endpoint, region, insecure)", k)
		}
	}
	return c, nil
}

// String is the URL again, in its one canonical form.
func (c S3Config) String() string {
	s := "s3://" + c.Bucket + "/" + c.Prefix + "?endpoint=" + c.Endpoint
	if c.Region != "" {
		s += "&region=" + c.Region
	}
	if c.Insecure {
		s += "&insecure=1"
	}
	return s
}

// validBucket is S3's bucket naming rule (the part every store shares).
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 || strings.Contains(b, "..") || net.ParseIP(b) != nil {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		edge := i == 0 || i == len(b)-1
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || !edge && (c == '-' || c == '.')) {
			return false
		}
	}
	return true
}
