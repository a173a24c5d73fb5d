package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
)

// Java's TopAddressing: the name-server list of a deployment without fixed addresses
// comes from an HTTP service, fetched at start and every two minutes.
const (
	// DefaultAddrServiceInterval is how often the list is fetched again (Java's 2 min).
	DefaultAddrServiceInterval = 2 * time.Minute
	// addrServiceTimeout bounds one fetch (Java's fetchNSAddr: 3 s).
	addrServiceTimeout = 3 * time.Second
	// maxAddrServiceAnswer bounds what is read of an answer: a list of name servers is a
	// few hundred bytes.
	maxAddrServiceAnswer = 64 << 10
)

// AddrServiceURL is Java's MixAll.getWSAddr: http://<domain>:8080/rocketmq/<subgroup>,
// the port left out when the domain has one.
func AddrServiceURL(domain, subgroup string) string {
	if strings.Contains(domain, ":") {
		return "http://" + domain + "/rocketmq/" + subgroup
	}
	return "http://" + domain + ":8080/rocketmq/" + subgroup
}

// addrService fetches the name-server list from an address service.
type addrService struct {
	url    string
	client *http.Client
}

func newAddrService(url string) *addrService {
	// No connection is kept between fetches two minutes apart, so nothing outlives a
	// fetch.
	return &addrService{url: url, client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
}

// fetch returns the list the service answers. The answer must be host:port entries
// separated by ';' (what Java's updateNameServerAddressList splits), on its first line.
func (s *addrService) fetch(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, addrServiceTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("client: name-server address service %s: %w", s.url, err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: name-server address service: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAddrServiceAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("client: name-server address service %s: reading the answer: %w", s.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("client: name-server address service %s answered %s", s.url, resp.Status)
	}
	if len(body) > maxAddrServiceAnswer {
		return nil, fmt.Errorf("client: name-server address service %s: answer longer than %d bytes", s.url, maxAddrServiceAnswer)
	}
	addrs, err := ParseNameServerList(firstLine(string(body)))
	if err != nil {
		return nil, fmt.Errorf("client: name-server address service %s: %w", s.url, err)
	}
	return addrs, nil
}

// firstLine is Java's TopAddressing.clearNewLine: trimmed, cut at the first line break.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// ParseNameServerList splits a list of name servers separated by ';' (empty entries are
// skipped) and checks that each is host:port.
func ParseNameServerList(list string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(list, ";") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if err := checkHostPort(a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no name-server address in %q", list)
	}
	return out, nil
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("name-server address %q: %w", addr, err)
	}
	if host == "" || strings.ContainsAny(host, " /") {
		return fmt.Errorf("name-server address %q: bad host", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("name-server address %q: bad port", addr)
	}
	return nil
}

// FetchNameServers fetches the name-server list from the address service, when the
// Instance has one, and uses it from then on: the list replaces the one before, and
// connections to name servers that left it are closed. Routes already known stay. It is
// what Start does first and what the scheduler does every AddrServiceInterval; without
// an address service it does nothing.
func (i *Instance) FetchNameServers(ctx context.Context) error {
	if i.addrs == nil {
		return nil
	}
	if i.closed() {
		return ErrClosed
	}
	addrs, err := i.addrs.fetch(ctx)
	if err != nil {
		return err
	}
	if removed, changed := i.nameServer.set(addrs); changed {
		if logging.Enabled(i.log, logging.LevelInfo) {
			i.log.Log(logging.LevelInfo, "name-server list changed", "addrs", strings.Join(addrs, ";"), "from", i.addrs.url)
		}
		for _, a := range removed {
			i.rc.CloseConn(a)
		}
	}
	return nil
}

func (i *Instance) fetchNameServers(ctx context.Context) {
	if err := i.FetchNameServers(ctx); err != nil && !errors.Is(err, ErrClosed) && ctx.Err() == nil && logging.Enabled(i.log, logging.LevelWarn) {
		i.log.Log(logging.LevelWarn, "name-server list not fetched; keeping the current one", "err", err)
	}
}

// set replaces the list, keeping the name server in use when it stays, and returns the
// addresses that left it and whether anything changed.
func (n *nameServers) set(addrs []string) (removed []string, changed bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if slices.Equal(slices.Sorted(slices.Values(addrs)), slices.Sorted(slices.Values(n.addrs))) {
		return nil, false
	}
	var current string
	if len(n.addrs) > 0 {
		current = n.addrs[n.current]
	}
	for _, a := range n.addrs {
		if !slices.Contains(addrs, a) {
			removed = append(removed, a)
		}
	}
	n.addrs = slices.Clone(addrs)
	n.current = max(slices.Index(n.addrs, current), 0)
	return removed, true
}
