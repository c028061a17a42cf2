package gossip

import (
	"net"
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

// Two nodes with no bootstrap find each other by mDNS.
func TestMDNS(t *testing.T) {
	if !haveMulticast() {
		t.Skip("no multicast interface")
	}
	mdnsOn := func(c *Config) { c.MDNS = true; c.Teams = []string{"mdns-test"} }
	a := startNode(t, mdnsOn)
	b := startNode(t, mdnsOn)
	eventually(t, 15*time.Second, "mDNS peers to connect", func() bool { return connectedTo(a, b) || connectedTo(b, a) })
}
