package gossip

import (
	"net"
	"os"
	"testing"
	"time"
)

func haveMulticast() bool {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagMulticast != 0 {
			return true
		}
	}
	return false
}

// Two nodes with no bootstrap find each other by mDNS. mDNS multicasts on
// the machine's real interfaces, not on loopback, so the test runs only
// when asked (REMEM_TEST_MDNS=1): network tests here stay on loopback, and
// multicast is not there on every machine.
func TestMDNS(t *testing.T) {
	if os.Getenv("REMEM_TEST_MDNS") == "" {
		t.Skip("mDNS uses the real network; set REMEM_TEST_MDNS=1 to run it")
	}
	if !haveMulticast() {
		t.Skip("no multicast interface")
	}
	mdnsOn := func(c *Config) { c.MDNS = true; c.Teams = []string{"mdns-test"} }
	a := startNode(t, mdnsOn)
	b := startNode(t, mdnsOn)
	eventually(t, 15*time.Second, "mDNS peers to connect", func() bool { return connectedTo(a, b) || connectedTo(b, a) })
}
