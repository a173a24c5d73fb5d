package integration

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/consumer"
	"github.com/rmqpush/rmqpush/message"
	"github.com/rmqpush/rmqpush/test/fakebroker"
)

// An admin resets the offset to the beginning while a listener call of the old
// assignment is still running, and while the replay is held on an early message: the
// old call's result, arriving late, must not move the offset past the replay.
func TestResetOffsetIgnoresTheOldAssignmentsResults(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 1))
	b := c.Brokers()[0]
	produce(t, c, "t", "m", 40, "")
	releaseOld := make(chan struct{})
	releaseReplay := make(chan struct{})
	var replayHeld atomic.Bool
	seen := map[string]int{}
	var mu sync.Mutex
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c),
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			body := string(msgs[0].Body)
			mu.Lock()
			seen[body]++
			n := seen[body]
			mu.Unlock()
			switch {
			case body == "m-15" && n == 1:
				<-releaseOld
			case body == "m-5" && n == 2:
				replayHeld.Store(true)
				<-releaseReplay
			}
			return consumer.ConsumeSuccess
		})
	defer shutdown(t, pc)
	waitFor(t, 10*time.Second, "the first pass up to the stuck message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 40
	})
	// A reset needs the broker to know the group's offsets (4.9.8 refuses it for a group
	// with none): the first commit reaches it within the commit interval.
	waitFor(t, 10*time.Second, "the group's first commit", func() bool {
		_, ok := b.CommittedOffset("g", "t", 0)
		return ok
	})
	_, err := c.ResetOffsetByTime("g", "t", 0, true)
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the replay to hold at m-5", replayHeld.Load)
	close(releaseOld) // the old assignment's call ends now, after the reset
	time.Sleep(600 * time.Millisecond)
	off, _ := b.CommittedOffset("g", "t", 0)
	require.LessOrEqual(t, off, int64(5), "the old call's result moved the offset past the replay")
	close(releaseReplay)
	waitFor(t, 10*time.Second, "the replay to finish", func() bool {
		off, _ := b.CommittedOffset("g", "t", 0)
		return off == 40
	})
}

// Shutdown with a context that ends while a listener call is stuck still persists the
// offsets of everything consumed, and unregisters.
func TestShutdownOutOfTimeStillPersists(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 2))
	b := c.Brokers()[0]
	for q := range 2 {
		msgs := make([]*message.Message, 40)
		for i := range msgs {
			msgs[i] = &message.Message{Topic: "t", Body: []byte("m")}
		}
		_, err := b.Produce("t", q, msgs...)
		require.NoError(t, err)
	}
	release := make(chan struct{})
	defer close(release)
	var done atomic.Int64
	pc := startConsumer(t, "g", "t", consumer.All(), fastOptions(c, consumer.WithPersistConsumerOffsetInterval(time.Hour)),
		func(ctx context.Context, msgs []*message.Ext, _ *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
			if msgs[0].QueueID == 1 && msgs[0].QueueOffset == 3 {
				select {
				case <-release:
				case <-ctx.Done():
					return consumer.ReconsumeLater
				}
			}
			done.Add(1)
			return consumer.ConsumeSuccess
		})
	waitFor(t, 10*time.Second, "everything but the stuck call", func() bool { return done.Load() == 79 })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := pc.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	off0, _ := b.CommittedOffset("g", "t", 0)
	off1, _ := b.CommittedOffset("g", "t", 1)
	require.Equal(t, int64(40), off0, "queue 0 was consumed completely: persisted although ctx had ended")
	require.Equal(t, int64(3), off1, "queue 1 stops at the stuck message")
	require.Empty(t, b.Clients("g"), "unregistered although ctx had ended")
}

// Shutdown while Start is still running: Start stops and returns ErrClosed (or finishes
// first and Shutdown then stops the consumer); nothing is left running.
func TestShutdownDuringStart(t *testing.T) {
	c := newCluster(t, fakebroker.WithTopic("t", 4))
	for i := range 8 {
		pc, err := consumer.NewPushConsumer("g", fastOptions(c)...)
		require.NoError(t, err)
		require.NoError(t, pc.Subscribe("t", consumer.All()))
		require.NoError(t, pc.RegisterListener(consumer.ConcurrentlyFunc(
			func(context.Context, []*message.Ext, *consumer.ConcurrentlyContext) consumer.ConcurrentlyStatus {
				return consumer.ConsumeSuccess
			})))
		started := make(chan error, 1)
		go func() { started <- pc.Start(context.Background()) }()
		time.Sleep(time.Duration(i) * 2 * time.Millisecond) // hit Start at different phases
		_ = pc.Stats()
		require.NoError(t, pc.Shutdown(context.Background()))
		if err := <-started; err != nil {
			require.True(t, errors.Is(err, consumer.ErrClosed), "Start: %v", err)
		}
		require.NoError(t, pc.Shutdown(context.Background()), "again: a no-op")
	}
}
