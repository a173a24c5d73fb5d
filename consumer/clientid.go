package consumer

import (
	"net"
	"os"
	"strconv"
	"time"
)

// clientID returns Java's client id, ip@instanceName. A clustering consumer with the
// default instance name gets pid#nanotime instead (Java's changeInstanceNameToPID), so
// that consumers of one group on one host never share an id; a broadcasting consumer
// keeps "DEFAULT", so its local offsets file is found again after a restart.
func (c *cfg) clientID(now time.Time) string {
	ip := c.clientIP
	if ip == "" {
		ip = localIPv4()
	}
	instance := c.instanceName
	if instance == "DEFAULT" && c.model == Clustering {
		instance = strconv.Itoa(os.Getpid()) + "#" + strconv.FormatInt(now.UnixNano(), 10)
	}
	return ip + "@" + instance
}

// localIPv4 returns the host's first non-loopback IPv4 address, or 127.0.0.1.
func localIPv4() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if v4 := ipn.IP.To4(); v4 != nil && !v4.IsLoopback() && !v4.IsLinkLocalUnicast() {
					return v4.String()
				}
			}
		}
	}
	return "127.0.0.1"
}
