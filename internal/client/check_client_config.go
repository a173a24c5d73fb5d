package client

import (
	"context"
	"sync"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// ConfigCheck is one broker's answer to CHECK_CLIENT_CONFIG.
type ConfigCheck struct {
	BrokerName string
	Addr       string
	// Err is nil when the broker accepts the subscription, a *protocol.BrokerError
	// (with the broker's code and remark) when it refuses it, and any other error when
	// it could not be asked.
	Err error
}

// CheckClientConfig asks the master of every broker serving sd.Topic whether it can
// filter by sd (CHECK_CLIENT_CONFIG, 46), in parallel, and returns their answers in
// broker-name order. Java's MQClientInstance.checkClientInBroker asks one broker of the
// topic, assuming the others are configured alike; asking each finds the one that is
// not. The request has no ext fields and the body Java sends: {clientId, group,
// subscriptionData}. It fails only when no route of the topic can be had.
func (i *Instance) CheckClientConfig(ctx context.Context, group string, sd protocol.SubscriptionData) ([]ConfigCheck, error) {
	if i.closed() {
		return nil, ErrClosed
	}
	masters, err := i.topicMasters(ctx, sd.Topic)
	if err != nil {
		return nil, err
	}
	body := (&protocol.CheckClientConfigBody{ClientID: i.cfg.ClientID, Group: group, SubscriptionData: sd}).
		Encode(protocol.StyleStandard)
	var wg sync.WaitGroup
	for k := range masters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := remoting.NewRequest(protocol.RequestCheckClientConfig, nil, body)
			_, masters[k].Err = i.invoke(ctx, masters[k].Addr, req)
		}()
	}
	wg.Wait()
	return masters, nil
}
