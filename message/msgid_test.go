package message

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOffsetMsgIDRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		host   string
		offset int64
		want   string
	}{
		// From ../shared/golden (b_consume_retry, goldenIndex=3).
		{"127.0.0.1:10911", 1800016867, "7F00000100002A9F000000006B4A13E3"},
		{"[2001:db8::1]:10911", 42, "20010DB800000000000000000000000100002A9F000000000000002A"},
	} {
		host := netip.MustParseAddrPort(tc.host)
		id := OffsetMsgID(host, tc.offset)
		require.Equal(t, tc.want, id)
		gotHost, gotOffset, err := ParseOffsetMsgID(id)
		require.NoError(t, err)
		require.Equal(t, host, gotHost)
		require.Equal(t, tc.offset, gotOffset)
	}
}

func TestParseOffsetMsgIDErrors(t *testing.T) {
	for _, id := range []string{"", "ABC", "ZZ00000100002A9F000000006B4A13E3", "7F000001FFFFFFFF000000006B4A13E3"} {
		_, _, err := ParseOffsetMsgID(id)
		require.Error(t, err, id)
	}
}

func TestOffsetMsgIDWithoutStoreHost(t *testing.T) {
	require.Equal(t, "0000000000000000000000000000002A", OffsetMsgID(netip.AddrPort{}, 42))
	m := &Ext{CommitLogOffset: 42}
	require.Equal(t, "0000000000000000000000000000002A", m.MsgID(), "a hand-built message has an id too")
}
