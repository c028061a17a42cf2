package commons

import (
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

func TestParseStorageURL(t *testing.T) {
	good := []struct {
		in   string
		want S3Config
	}{
		{"s3://commons?endpoint=127.0.0.1:9000&insecure=1", S3Config{Bucket: "commons", Endpoint: "127.0.0.1:9000", Insecure: true}},
		{"s3://my.bucket-1/remem/public/?endpoint=s3.eu-west-1.amazonaws.com&region=eu-west-1",
			S3Config{Bucket: "my.bucket-1", Prefix: "remem/public/", Endpoint: "s3.eu-west-1.amazonaws.com", Region: "eu-west-1"}},
		{"s3://abc", S3Config{Bucket: "abc", Endpoint: "s3.amazonaws.com"}},
		{"s3://abc/p?endpoint=[::1]:9000&insecure=0", S3Config{Bucket: "abc", Prefix: "p/", Endpoint: "[::1]:9000"}},
	}
	for _, c := range good {
		got, err := ParseStorageURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.in, got, err, c.want)
			continue
		}
		if again, err := ParseStorageURL(got.String()); err != nil || again != got {
			t.Errorf("%s: String() %s reads back as %+v %v", c.in, got.String(), again, err)
		}
	}
	bad := []struct{ in, says string }{
		{"", "only s3://"},
		{"/var/lib/commons", "--data DIR"},
		{"S3://bucket", "only s3://"},
		{"http://bucket", "only s3://"},
		{"s3://AKIA:secret@bucket", "AWS_ACCESS_KEY_ID"},
		{"s3://bucket:9000", "endpoint="},
		{"s3://ab", "not an S3 bucket"},
		{"s3://Bucket", "not an S3 bucket"},
		{"s3://-bucket", "not an S3 bucket"},
		{"s3://bu..cket", "not an S3 bucket"},
		{"s3://192.168.1.1", "not an S3 bucket"},
		{"s3://" + strings.Repeat("b", 64), "not an S3 bucket"},
		{"s3://bucket/../etc", "prefix segment"},
		{"s3://bucket/a//b", "prefix segment"},
		{"s3://bucket/a/./b", "prefix segment"},
		{"s3://bucket/a%20b", "prefix segment"},
		{"s3://bucket/" + strings.Repeat("p", 513), "over 512"},
		{"s3://bucket#x", "fragment"},
		{"s3://bucket?endpoint=http://127.0.0.1:9000", "without a scheme"},
		{"s3://bucket?endpoint=host/path", "without a scheme"},
		{"s3://bucket?endpoint=host:port", "bad port"},
		{"s3://bucket?endpoint=host:123456", "bad port"},
		{"s3://bucket?endpoint=", "no host"},
		{"s3://bucket?endpoint=a&endpoint=b", "2 times"},
		{"s3://bucket?region=EU_WEST", "region"},
		{"s3://bucket?insecure=yes", "insecure"},
		{"s3://bucket?secret=x", "not a known parameter"},
		{"s3://bucket?a=%zz", "query"},
	}
	for _, c := range bad {
		_, err := ParseStorageURL(c.in)
		if err == nil {
			t.Errorf("%q was taken", c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v; want it to say %q", c.in, err, c.says)
		}
		if strings.Contains(c.in, "secret") && strings.Contains(err.Error(), "secret@") {
			t.Errorf("%q: the error repeats the credentials: %v", c.in, err)
		}
	}
}

// FuzzParseStorageURL: whatever it takes reads back the same from its
// String, and names a bucket and prefix that are safe keys.
func FuzzParseStorageURL(f *testing.F) {
	for _, s := range []string{"s3://commons/p?endpoint=127.0.0.1:9000&insecure=1", "s3://a.b-c/x/y?region=us-east-1", "s3://x", "s3://bucket/../"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseStorageURL(s)
		if err != nil {
			return
		}
		again, err := ParseStorageURL(c.String())
		if err != nil || again != c {
			t.Fatalf("%q → %+v → %q → %+v %v", s, c, c.String(), again, err)
		}
		if p := "/" + c.Prefix; !validBucket(c.Bucket) || strings.Contains(p, "/../") || strings.Contains(p, "/./") || strings.Contains(p, "//") && p != "/" {
			t.Fatalf("%q gave %+v", s, c)
		}
	})
}

func TestIndexKey(t *testing.T) {
	e := entry{Origin: "0123456789abcdef", Updated: time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.UTC), Records: 600, ETag: etagOf([]byte("x"))}
	k := indexKey(e)
	if checkKey(k) != nil {
		t.Fatalf("%s is not a storage key", k)
	}
	if got, ok := parseIndexKey(k); !ok || got != e {
		t.Fatalf("%s reads back as %+v %v", k, got, ok)
	}
	later := e
	later.Updated = later.Updated.Add(time.Nanosecond)
	if indexKey(later) <= k {
		t.Fatalf("keys do not sort by time: %s <= %s", indexKey(later), k)
	}
	o, at, ok := parsePendingKey(pendingKey(e.Origin, e.Updated))
	if !ok || o != e.Origin || !at.Equal(e.Updated) {
		t.Fatalf("pending key reads back as %s %s %v", o, at, ok)
	}
	for _, bad := range []string{"", "index/", "commons/" + k[len(indexDir):], "index/1.0123456789abcdef.1." + strings.Repeat("a", 32),
		strings.Replace(k, ".600.", ".0.", 1), strings.Replace(k, ".600.", ".0600.", 1), strings.Replace(k, ".600.", ".-1.", 1),
		strings.Replace(k, ".600.", ".99999999999.", 1), strings.Replace(k, "0123456789abcdef", "0123456789ABCDEF", 1),
		k + ".x", k[:len(k)-1], k[:len(k)-1] + "g", strings.Replace(k, "index/0", "index/+", 1), "index/-0000000000000000001.0123456789abcdef.1." + strings.Repeat("a", 32)} {
		if _, ok := parseIndexKey(bad); ok {
			t.Errorf("%q was taken as an index key", bad)
		}
	}
	for _, bad := range []string{"pending/", "pending/x.0123456789abcdef", "pending/" + stampKey(e.Updated), "pending/" + stampKey(e.Updated) + ".0123", "index/" + stampKey(e.Updated) + ".0123456789abcdef"} {
		if _, _, ok := parsePendingKey(bad); ok {
			t.Errorf("%q was taken as a pending key", bad)
		}
	}
}

// FuzzIndexKey: a key that parses is the key of what it parses to, so two
// keys never name one entry, and it is a storage key.
func FuzzIndexKey(f *testing.F) {
	f.Add(indexKey(entry{Origin: "0123456789abcdef", Updated: time.Unix(1, 5), Records: 3, ETag: etagOf(nil)}))
	f.Add("index/00000000000000000000.0000000000000000.1.00000000000000000000000000000000")
	f.Add("pending/00000000000000000001.0123456789abcdef")
	f.Fuzz(func(t *testing.T, s string) {
		if e, ok := parseIndexKey(s); ok {
			if indexKey(e) != s || checkKey(s) != nil {
				t.Fatalf("%q parses to %+v, whose key is %q", s, e, indexKey(e))
			}
		}
		if o, at, ok := parsePendingKey(s); ok && (pendingKey(o, at) != s || checkKey(s) != nil) {
			t.Fatalf("%q parses to %s %s, whose key is %q", s, o, at, pendingKey(o, at))
		}
		if checkKey(s) == nil {
			dir, name, _ := strings.Cut(s, "/")
			if strings.Contains(name, "/") || strings.HasPrefix(name, ".") || !validDir(dir) {
				t.Fatalf("checkKey took %q", s)
			}
		}
	})
}

// FuzzLegacyIndex: whatever an index.json of an earlier version holds,
// what is taken from it is valid origins with a time.
func FuzzLegacyIndex(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":[{"origin":"0123456789abcdef","updated":"2026-05-01T10:00:00Z","records":2,"etag":"\"ab\"","size":3,"mtime_ns":4}]}`))
	f.Add([]byte(`{"version":2,"entries":[]}`))
	f.Add([]byte(`{garbage`))
	f.Add([]byte(`{"version":1,"entries":[{"origin":"../../etc/passwd","updated":"2026-05-01T10:00:00Z"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for o, e := range parseLegacyIndex(data) {
			if !protocol.ValidOrigin(o) || e.Origin != o || e.Updated.IsZero() {
				t.Fatalf("took %q: %+v", o, e)
			}
		}
	})
}
