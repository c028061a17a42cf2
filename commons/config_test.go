package commons

import (
	"context"
	"strings"
	"testing"

	"github.com/remem/remem/internal/testutil"
)

func TestServerConfigValidate(t *testing.T) {
	good := func() ServerConfig {
		c := DefaultServerConfig()
		c.DataDir, c.Tokens = t.TempDir(), []string{testToken}
		return c
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("DefaultServerConfig with a directory and a token: %v", err)
	}
	if err := (ServerConfig{DataDir: "d", Tokens: []string{"t"}}).Validate(); err != nil {
		t.Fatalf("zero limits and rates (defaults, no limit): %v", err)
	}
	const secret = "s3cret with space"
	cases := []struct {
		name, field string
		mod         func(*ServerConfig)
	}{
		{"no data dir", "DataDir", func(c *ServerConfig) { c.DataDir = "" }},
		{"no token", "Tokens", func(c *ServerConfig) { c.Tokens = nil }},
		{"blank token", "Tokens", func(c *ServerConfig) { c.Tokens = []string{testToken, " \n"} }},
		{"token with a space", "Tokens", func(c *ServerConfig) { c.Tokens = []string{secret} }},
		{"rate without burst", "RatePerOrigin.Burst", func(c *ServerConfig) { c.RatePerOrigin = Rate{PerMinute: 6} }},
		{"burst without rate", "RatePerClient.PerMinute", func(c *ServerConfig) { c.RatePerClient = Rate{Burst: 6} }},
		{"negative rate", "RatePerClient.PerMinute", func(c *ServerConfig) { c.RatePerClient = Rate{PerMinute: -1, Burst: 1} }},
		{"negative file cap", "MaxFileBytes", func(c *ServerConfig) { c.MaxFileBytes = -1 }},
		{"negative record cap", "MaxRecords", func(c *ServerConfig) { c.MaxRecords = -1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.mod(&c)
			err := c.Validate()
			testutil.WantField(t, err, tc.field)
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error repeats a token: %v", err)
			}
			if s, err := NewServer(context.Background(), c); err == nil {
				s.Close()
				t.Fatal("NewServer accepted it")
			}
			t.Log(err)
		})
	}
}
