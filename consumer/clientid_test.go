package consumer

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPickIPv4PrefersJavasChoice(t *testing.T) {
	ips := func(ss ...string) []net.IP {
		var out []net.IP
		for _, s := range ss {
			out = append(out, net.ParseIP(s))
		}
		return out
	}
	for _, tc := range []struct {
		addrs []string
		want  string
	}{
		{[]string{"192.168.1.5", "10.0.0.7", "172.16.0.1"}, "10.0.0.7"},
		{[]string{"192.168.1.5", "192.168.2.6"}, "192.168.2.6"},
		{[]string{"fe80::1", "127.0.0.1", "169.254.1.1", "2001:db8::1"}, "127.0.0.1"},
		{nil, "127.0.0.1"},
	} {
		require.Equal(t, tc.want, pickIPv4(ips(tc.addrs...)), "%v", tc.addrs)
	}
}
