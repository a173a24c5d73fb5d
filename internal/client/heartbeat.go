package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rmqpush/rmqpush/internal/logging"
	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// SendHeartbeat sends the heartbeat of every registered consumer to every known broker
// (masters and slaves), in parallel. It returns how many brokers accepted it and the
// joined errors of those that did not. With no consumer registered it sends nothing.
func (i *Instance) SendHeartbeat(ctx context.Context) (int, error) {
	if i.closed() {
		return 0, ErrClosed
	}
	// The two fields a 5.x client adds, as Java 5.3.3 sends them (golden p_pop_533): 4.x
	// brokers ignore them.
	hb := protocol.HeartbeatData{ClientID: i.cfg.ClientID, HeartbeatFingerprint: protocol.Some(int64(0)), WithoutSub: protocol.Some(false)}
	for _, c := range i.consumerList() {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, c.ConsumerData())
	}
	if len(hb.ConsumerDataSet) == 0 {
		return 0, nil
	}
	body := hb.Encode(protocol.StyleStandard)
	addrs := i.brokerAddrs()
	if len(addrs) == 0 {
		return 0, errors.New("client: heartbeat: no broker address known yet")
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ok   int
		errs []error
	)
	began := time.Now()
	defer func() {
		if logging.Enabled(i.log, logging.LevelDebug) {
			i.log.Log(logging.LevelDebug, "heartbeat sent", "brokers", len(addrs), "accepted", ok, "bytes", len(body),
				"subscriptions", subscriptions(hb), "took", time.Since(began))
		}
	}()
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := i.heartbeatOne(ctx, addr, body)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				ok++
			}
		}()
	}
	wg.Wait()
	return ok, joinErrs(errs)
}

// subscriptions counts the subscriptions of a heartbeat's consumers.
func subscriptions(hb protocol.HeartbeatData) int {
	n := 0
	for _, cd := range hb.ConsumerDataSet {
		n += len(cd.SubscriptionDataSet)
	}
	return n
}

func (i *Instance) heartbeatOne(ctx context.Context, addr string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, i.cfg.RequestTimeout)
	defer cancel()
	req := remoting.NewRequest(protocol.RequestHeartBeat, nil, body)
	resp, err := i.rc.Invoke(ctx, addr, req)
	if err != nil {
		return fmt.Errorf("client: heartbeat to %s: %w", addr, err)
	}
	if resp.Code != protocol.ResponseSuccess {
		return fmt.Errorf("client: heartbeat: %w", protocol.NewBrokerError(addr, req, resp))
	}
	return nil
}

// HeartbeatSoon asks the scheduler to send a heartbeat now, without waiting (after a
// subscription or rebalance change, as Java does).
func (i *Instance) HeartbeatSoon() {
	select {
	case i.kick <- struct{}{}:
	default:
	}
}

// unregisterClient tells every broker that group's consumer left.
func (i *Instance) unregisterClient(ctx context.Context, group string) error {
	if i.closed() {
		return ErrClosed
	}
	h := protocol.UnregisterClientRequest{ClientID: i.cfg.ClientID, ConsumerGroup: group}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, addr := range i.brokerAddrs() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			callCtx, cancel := context.WithTimeout(ctx, i.cfg.RequestTimeout)
			defer cancel()
			req := remoting.NewRequest(protocol.RequestUnregisterClient, h.Encode(), nil)
			resp, err := i.rc.Invoke(callCtx, addr, req)
			if err == nil && resp.Code != protocol.ResponseSuccess {
				err = protocol.NewBrokerError(addr, req, resp)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("client: unregister %s from %s: %w", group, addr, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	err := joinErrs(errs)
	if err == nil && logging.Enabled(i.log, logging.LevelInfo) {
		i.log.Log(logging.LevelInfo, "consumer unregistered from brokers", "group", group, "clientID", i.cfg.ClientID)
	}
	return err
}

// joinErrs is errors.Join, returning nil (not an empty join) for no errors.
func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}
