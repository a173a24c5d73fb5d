package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// sqlExpr is what TestSQL92DeliversExactlyTheSelected subscribes with.
const sqlExpr = "region IN ('eu', 'us') AND amount > 100 OR vip = 'yes'"

// verdict is a value of 4.9.8's evaluation: SQL's three values, and a failure (an
// exception, which makes the message not match whatever the rest says).
type verdict int

const (
	unknown verdict = iota
	no
	yes
	failed
)

// sqlOracle says whether 4.9.8 delivers a message with these properties to sqlExpr,
// written out for this one expression from 4.9.8's rules, apart from the evaluator the
// fake broker uses: a property with an empty value is not stored; IN gives unknown for a
// missing property; amount > 100 parses the property as a Java int (failing on "150.5"
// or " 200"); AND and OR evaluate left to right and stop at the first operand that
// decides, and a failure ends the evaluation.
func sqlOracle(props map[string]string) bool {
	get := func(k string) (string, bool) {
		v, ok := props[k]
		return v, ok && v != ""
	}
	region := func() verdict {
		v, ok := get("region")
		switch {
		case !ok:
			return unknown
		case v == "eu" || v == "us":
			return yes
		}
		return no
	}
	amount := func() verdict {
		v, ok := get("amount")
		if !ok {
			return unknown
		}
		n, err := strconv.ParseInt(v, 10, 32)
		switch {
		case err != nil:
			return failed
		case n > 100:
			return yes
		}
		return no
	}
	vip := func() verdict {
		v, ok := get("vip")
		switch {
		case !ok:
			return unknown
		case v == "yes":
			return yes
		}
		return no
	}
	and := func(l, r func() verdict) verdict {
		lv := l()
		if lv == failed || lv == no {
			return lv
		}
		rv := r()
		switch {
		case rv == failed || rv == no:
			return rv
		case lv == unknown || rv == unknown:
			return unknown
		}
		return yes
	}
	or := func(l, r func() verdict) verdict {
		lv := l()
		if lv == failed || lv == yes {
			return lv
		}
		rv := r()
		switch {
		case rv == failed || rv == yes:
			return rv
		case lv == unknown || rv == unknown:
			return unknown
		}
		return no
	}
	return or(func() verdict { return and(region, amount) }, vip) == yes
}

// randomProps draws properties that cover what 4.9.8 treats specially: values missing
// or empty, numbers it cannot read as an int, case.
func randomProps(r *rand.Rand) map[string]string {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	p := map[string]string{}
	if r.IntN(8) > 0 {
		p["region"] = pick("eu", "us", "asia", "EU", "", "eu ")
	}
	if r.IntN(8) > 0 {
		if r.IntN(4) > 0 {
			p["amount"] = strconv.Itoa(r.IntN(300))
		} else {
			p["amount"] = pick("150.5", "abc", " 200", "+300", "007", "", "3000000000", "-5")
		}
	}
	if r.IntN(4) == 0 {
		p["vip"] = pick("yes", "no", "YES", "")
	}
	return p
}

// An rmqpush group subscribed with SQL92 over 2 brokers × 4 queues gets exactly the
// messages an independent oracle selects, whether the brokers filter by the heartbeat's
// expression or by the one posted with each pull.
func TestSQL92DeliversExactlyTheSelected(t *testing.T) {
	for _, post := range []bool{false, true} {
		t.Run(fmt.Sprintf("postSubscriptionWhenPull=%v", post), func(t *testing.T) {
			c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("SqlTopic", 4), fakebroker.WithPropertyFilter(true))
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 12))
			var want []string
			msgs := make([]*message.Message, 1000)
			for i := range msgs {
				props := randomProps(r)
				m := &message.Message{Topic: "SqlTopic", Body: []byte(fmt.Sprintf("sql-%d", i))}
				for k, v := range props {
					m.Properties.Set(k, v)
				}
				msgs[i] = m
				if sqlOracle(props) {
					want = append(want, string(m.Body))
				}
			}
			_, err := c.Produce("SqlTopic", msgs...)
			require.NoError(t, err)
			require.NotEmpty(t, want)
			require.Less(t, len(want), len(msgs)/2)

			got := newTally()
			group := "SqlGroup"
			pc := startConsumer(t, group, "SqlTopic", consumer.SQL92(sqlExpr),
				fastOptions(c, consumer.WithPostSubscriptionWhenPull(post)),
				func(_ context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
					got.add(msgs)
					return consumer.ConsumeSuccess
				})
			defer shutdown(t, pc)
			// Every queue read to its end (a long poll held at its max offset, the 4 of
			// the topic and the retry topic's on each broker): what was not delivered was
			// filtered out.
			scanned := func() bool {
				for _, b := range c.Brokers() {
					if b.HeldPulls() != 5 {
						return false
					}
				}
				for _, qs := range pc.Stats().Queues {
					if qs.CachedMsgs > 0 { // pulled, not consumed yet
						return false
					}
				}
				return true
			}
			waitFor(t, 30*time.Second, "every selected message, every queue read", func() bool {
				return got.distinct() >= len(want) && scanned()
			}, func() string { return fmt.Sprintf("%d of %d delivered", got.distinct(), len(want)) })
			missing, dups := got.check(want)
			require.Zero(t, missing)
			require.Zero(t, dups)
			require.Equal(t, len(want), got.distinct(), "delivered only the selected")
			for q, qs := range pc.Stats().Queues {
				require.Empty(t, qs.FilterRefused, q.String())
			}
		})
	}
}

// A broker without enablePropertyFilter makes Start fail, naming the topic, the broker
// and the broker's remark, before the first heartbeat.
func TestSQL92StartFailsWithoutPropertyFilter(t *testing.T) {
	c := newCluster(t, fakebroker.WithBrokers(2), fakebroker.WithTopic("SqlTopic", 4))
	err := startFailing(t, c, "SqlGroup", "amount > 100")
	var refused *consumer.SubscriptionRefusedError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, "SqlTopic", refused.Topic)
	require.Equal(t, "amount > 100", refused.Expression)
	require.Equal(t, int32(fakebroker.ResponseSystemError), refused.Code)
	require.Equal(t, "The broker does not support consumer to filter message by SQL92", refused.Remark)
	for _, b := range c.Brokers() {
		require.ErrorContains(t, err, "broker "+b.Name()+" ("+b.Addr()+")")
		require.Zero(t, b.Requests(fakebroker.RequestHeartBeat), "no heartbeat after a refusal")
		require.Zero(t, b.Requests(fakebroker.RequestPullMessage))
	}
	require.ErrorContains(t, err, `topic "SqlTopic"`)
	require.ErrorContains(t, err, "enablePropertyFilter=true")
}

// An expression the brokers cannot parse makes Start fail with their parser's message,
// before any pull; one the client can see is wrong fails Subscribe.
func TestSQL92BadExpressionFailsBeforeAnyPull(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("SqlTopic", 4), fakebroker.WithPropertyFilter(true))
	err := startFailing(t, c, "SqlGroup", "amount > AND")
	var refused *consumer.SubscriptionRefusedError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, int32(fakebroker.ResponseSubscriptionParseFailed), refused.Code)
	require.Contains(t, refused.Remark, `ParseException: Encountered " "AND" "AND "" at line 1, column 10.`)
	b := c.Broker("broker-a")
	require.Equal(t, 1, b.Requests(fakebroker.RequestCheckClientConfig))
	require.Zero(t, b.Requests(fakebroker.RequestPullMessage))

	pc, err := consumer.NewPushConsumer("SqlGroup", fastOptions(c)...)
	require.NoError(t, err)
	require.ErrorContains(t, pc.Subscribe("SqlTopic", consumer.SQL92("region = 'eu")), "never closed")
	require.NoError(t, pc.Shutdown(context.Background()))
}

// startFailing starts a consumer of SqlTopic with an SQL92 expression and returns the
// error its Start must give.
func startFailing(t *testing.T, c *fakebroker.Cluster, group, expr string) error {
	t.Helper()
	pc, err := consumer.NewPushConsumer(group, fastOptions(c)...)
	require.NoError(t, err)
	require.NoError(t, pc.Subscribe("SqlTopic", consumer.SQL92(expr)))
	require.NoError(t, pc.RegisterListener(consumer.ConcurrentlyFunc(
		func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			t.Error("no message may be consumed")
			return consumer.ConsumeSuccess
		})))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = pc.Start(ctx)
	require.Error(t, err)
	require.False(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.NoError(t, pc.Shutdown(context.Background()))
	return err
}
