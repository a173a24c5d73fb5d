package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// addrServer is an address service whose answer the test sets.
type addrServer struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	answer string
	hits   atomic.Int32
}

func newAddrServer(t *testing.T) *addrServer {
	t.Helper()
	s := &addrServer{status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if r.URL.Path != "/rocketmq/nsaddr" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		status, answer := s.status, s.answer
		s.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *addrServer) set(status int, answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.answer = status, answer
}

// domain is the server's host:port, as WithNameServerDomain takes it.
func (s *addrServer) domain() string { return strings.TrimPrefix(s.URL, "http://") }

// proxy forwards connections to target; close ends them all.
type proxy struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	open  atomic.Int32
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			p.open.Add(1)
			p.wg.Add(2)
			go func() { defer p.wg.Done(); _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { defer p.wg.Done(); _, _ = io.Copy(in, out); _ = in.Close(); p.open.Add(-1) }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func TestAddrServiceURL(t *testing.T) {
	require.Equal(t, "http://jmenv.tbsite.net:8080/rocketmq/nsaddr", AddrServiceURL("jmenv.tbsite.net", "nsaddr"))
	require.Equal(t, "http://127.0.0.1:8081/rocketmq/nsaddr-unit", AddrServiceURL("127.0.0.1:8081", "nsaddr-unit"))
}

// Only a list of host:port entries is taken; anything else leaves the list as it was.
func TestAddrServiceAnswersAreChecked(t *testing.T) {
	srv := newAddrServer(t)
	s := newAddrService(AddrServiceURL(srv.domain(), "nsaddr"))
	for answer, want := range map[string][]string{
		"10.0.0.1:9876;10.0.0.2:9876":         {"10.0.0.1:9876", "10.0.0.2:9876"},
		" 10.0.0.1:9876;\n":                   {"10.0.0.1:9876"},
		"ns-a.example:9876\r\nsecond line":    {"ns-a.example:9876"},
		"[::1]:9876;;10.0.0.2:9876;":          {"[::1]:9876", "10.0.0.2:9876"},
		"":                                    nil,
		"10.0.0.1":                            nil,
		"10.0.0.1:0":                          nil,
		"10.0.0.1:98765":                      nil,
		"<html>not found</html>":              nil,
		"10.0.0.1:9876;http://x/y:9876":       nil,
		strings.Repeat("10.0.0.1:9876;", 1e4): nil, // longer than 64 KiB
	} {
		srv.set(http.StatusOK, answer)
		got, err := s.fetch(context.Background())
		if want == nil {
			require.Error(t, err, "%.40q", answer)
			require.ErrorContains(t, err, srv.URL)
			continue
		}
		require.NoError(t, err, answer)
		require.Equal(t, want, got)
	}
	srv.set(http.StatusInternalServerError, "10.0.0.1:9876")
	_, err := s.fetch(context.Background())
	require.ErrorContains(t, err, "500")
}

// The list comes from the address service at FetchNameServers and then on the
// scheduler's interval. A new list replaces the old one: the connection to a name server
// that left it is closed, and the routes known stay in use.
func TestNameServerListFromTheAddressService(t *testing.T) {
	cluster := newTestCluster(t, fakebroker.WithTopic("t", 2))
	old := newProxy(t, cluster.NameServerAddr())
	srv := newAddrServer(t)
	srv.set(http.StatusOK, old.addr())

	inst, err := New(Config{NameServerURL: AddrServiceURL(srv.domain(), "nsaddr"), AddrServiceInterval: 20 * time.Millisecond,
		ClientID: "127.0.0.1@test", RequestTimeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(inst.Shutdown)
	ctx := context.Background()
	_, err = inst.UpdateTopicRoute(ctx, "t")
	require.ErrorContains(t, err, "no name-server address known", "nothing to ask before the first fetch")
	require.NoError(t, inst.FetchNameServers(ctx))
	require.Equal(t, []string{old.addr()}, inst.NameServers())
	_, err = inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, int32(1), old.open.Load())

	srv.set(http.StatusOK, "not a list")
	require.Error(t, inst.FetchNameServers(ctx))
	require.Equal(t, []string{old.addr()}, inst.NameServers(), "a bad answer changes nothing")

	srv.set(http.StatusOK, cluster.NameServerAddr())
	require.NoError(t, inst.Start())
	deadline := time.Now().Add(5 * time.Second)
	for inst.NameServers()[0] != cluster.NameServerAddr() {
		require.True(t, time.Now().Before(deadline), "the scheduler fetched the new list")
		time.Sleep(5 * time.Millisecond)
	}
	for old.open.Load() != 0 {
		require.True(t, time.Now().Before(deadline), "the connection to the name server that left was closed")
		time.Sleep(5 * time.Millisecond)
	}
	old.close()
	qs, ok := inst.Queues("t")
	require.True(t, ok, "the route stays")
	require.Len(t, qs, 2)
	_, err = inst.UpdateTopicRoute(ctx, "t")
	require.NoError(t, err, "routes come from the new name server")
	require.GreaterOrEqual(t, srv.hits.Load(), int32(3), "first fetch, the bad answer, the scheduler's")
}

// FuzzNameServerList: any answer of an address service gives a list of host:port
// entries or an error, never a panic.
func FuzzNameServerList(f *testing.F) {
	for _, s := range []string{"10.0.0.1:9876;10.0.0.2:9876", "", ";;", "[::1]:9876", "a:b", "x:1\r\ny:2", "h:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		addrs, err := ParseNameServerList(firstLine(answer))
		if err != nil {
			return
		}
		require.NotEmpty(t, addrs)
		for _, a := range addrs {
			require.NoError(t, checkHostPort(a))
			require.NotContains(t, a, ";")
		}
	})
}
