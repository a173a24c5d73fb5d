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

// localIPv4 returns the host's IPv4 address as Java's RemotingUtil.getLocalAddress
// picks it (see pickIPv4), or 127.0.0.1.
func localIPv4() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	var candidates []net.IP
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
				candidates = append(candidates, ipn.IP)
			}
		}
	}
	return pickIPv4(candidates)
}

// pickIPv4 applies Java's preference to a host's addresses: the first IPv4 address
// outside 127.* and 192.168.* (and, here, link-local), else the last 192.168.* one,
// else 127.0.0.1.
func pickIPv4(addrs []net.IP) string {
	var private net.IP
	for _, ip := range addrs {
		v4 := ip.To4()
		if v4 == nil || v4.IsLoopback() || v4.IsLinkLocalUnicast() || v4.IsUnspecified() {
			continue
		}
		if v4[0] == 192 && v4[1] == 168 {
			private = v4
			continue
		}
		return v4.String()
	}
	if private != nil {
		return private.String()
	}
	return "127.0.0.1"
}
