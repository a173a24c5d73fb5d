package client

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rmqpush/rmqpush/internal/protocol"
	"github.com/rmqpush/rmqpush/remoting"
)

// The mqadmin requests in testdata/acl were signed by Java's AclClientRPCHook with the
// credentials of RocketMQ 4.9.8's default tools.yml (../shared/golden e1_mqadmin_json).
// Re-signing each with our hook must give the signature Java computed.
func TestACLSignatureMatchesJava(t *testing.T) {
	files, err := filepath.Glob("testdata/acl/*.bin")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	hook := newACLHook(Credentials{AccessKey: "rocketmq2", SecretKey: "12345678"})
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			cmd, err := remoting.DecodeFrame(raw)
			require.NoError(t, err)
			want := cmd.ExtFields.Value("Signature")
			require.NotEmpty(t, want)

			cmd.ExtFields.Delete("Signature")
			cmd.ExtFields.Delete("AccessKey")
			hook.BeforeRequest("127.0.0.1:9876", cmd)
			require.Equal(t, "rocketmq2", cmd.ExtFields.Value("AccessKey"))
			require.Equal(t, want, cmd.ExtFields.Value("Signature"))
		})
	}
}

func TestACLSignsSecurityToken(t *testing.T) {
	cmd := remoting.NewRequest(34, remoting.Fields{{Key: "topic", Value: "t"}}, []byte("body"))
	newACLHook(Credentials{AccessKey: "ak", SecretKey: "sk", SecurityToken: "tok"}).BeforeRequest("x", cmd)
	require.Equal(t, "tok", cmd.ExtFields.Value("SecurityToken"))
	// Content: the values sorted by key (AccessKey, SecurityToken, topic), then the body.
	want := sign("sk", remoting.Fields{{Key: "AccessKey", Value: "ak"}, {Key: "SecurityToken", Value: "tok"}, {Key: "topic", Value: "t"}}, []byte("body"))
	require.Equal(t, want, cmd.ExtFields.Value("Signature"))
	without := sign("sk", remoting.Fields{{Key: "AccessKey", Value: "ak"}, {Key: "topic", Value: "t"}}, []byte("body"))
	require.NotEqual(t, without, want, "the token is signed")
}

// Every request signed in ../shared/golden/k_acl (a real 4.9.8 ACL broker): Java
// consumers and producer, mqadmin, a consumer with a SecurityToken and
// rocketmq-client-go. Re-signing each with our hook must give the signature the client
// computed. The consumer with a wrong secret (frames 0086-0106, sent between its MARK
// lines in the capture's program.log) signed with a secret the capture does not record;
// the broker refused its requests, and the right secret must not give its signatures.
func TestACLSignaturesOfTheACLBrokerCapture(t *testing.T) {
	secrets := map[string]string{"GoldenAK": "GoldenSK12345678", "GoldenPubAK": "GoldenPubSK12345678", "rocketmq2": "12345678"}
	files, err := filepath.Glob("testdata/k_acl/*.bin")
	require.NoError(t, err)
	require.Len(t, files, 124)
	var matched, tokens, wrong int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		cmd, err := remoting.DecodeFrame(raw)
		require.NoError(t, err)
		want := cmd.ExtFields.Value("Signature")
		ak := cmd.ExtFields.Value("AccessKey")
		require.NotEmpty(t, want, f)
		cred := Credentials{AccessKey: ak, SecretKey: secrets[ak], SecurityToken: cmd.ExtFields.Value("SecurityToken")}
		require.NotEmpty(t, cred.SecretKey, "%s: unknown access key %q", f, ak)
		for _, k := range []string{"Signature", "AccessKey", "SecurityToken"} {
			cmd.ExtFields.Delete(k)
		}
		newACLHook(cred).BeforeRequest("127.0.0.1:10941", cmd)
		if n := filepath.Base(f)[:4]; n >= "0086" && n <= "0106" {
			require.NotEqual(t, want, cmd.ExtFields.Value("Signature"), "%s was signed with the wrong secret", f)
			wrong++
			continue
		}
		require.Equal(t, want, cmd.ExtFields.Value("Signature"), f)
		matched++
		if cred.SecurityToken != "" {
			tokens++
		}
	}
	require.Equal(t, 113, matched)
	require.Equal(t, 23, tokens, "the SecurityToken consumer's requests")
	require.Equal(t, 11, wrong)
}

// tokenHook adds a field of its own to every request, as a cloud's authentication hook
// would, and records the answers.
type tokenHook struct {
	mu    sync.Mutex
	codes []int32
}

func (h *tokenHook) BeforeRequest(_ string, req *remoting.Command) {
	req.ExtFields.Set("CloudToken", "tok-1")
}

func (h *tokenHook) AfterResponse(_ string, _, resp *remoting.Command) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.codes = append(h.codes, resp.Code)
}

// User hooks run before the ACL signing, so the signature covers what they add, and
// they see the answers.
func TestRPCHooksRunBeforeACLSigning(t *testing.T) {
	got := make(chan remoting.Fields, 1)
	srv, err := remoting.NewServer(remoting.WithServerHandler(protocol.RequestGetRouteInfoByTopic,
		func(_ *remoting.ServerConn, req *remoting.Command) *remoting.Command {
			got <- append(remoting.Fields(nil), req.ExtFields...)
			return remoting.NewResponse(req, protocol.ResponseTopicNotExist, "no route")
		}))
	require.NoError(t, err)
	require.NoError(t, srv.Listen("127.0.0.1:0"))
	t.Cleanup(func() { _ = srv.Close() })

	hook := &tokenHook{}
	inst, err := New(Config{NameServers: []string{srv.Addr()}, ClientID: "127.0.0.1@test",
		RPCHooks: []remoting.RPCHook{hook}, Credentials: &Credentials{AccessKey: "ak", SecretKey: "sk"}})
	require.NoError(t, err)
	t.Cleanup(inst.Shutdown)

	_, err = inst.UpdateTopicRoute(context.Background(), "t")
	require.ErrorIs(t, err, protocol.ResponseCodeError(protocol.ResponseTopicNotExist))
	fields := <-got
	require.Equal(t, "tok-1", fields.Value("CloudToken"))
	require.Equal(t, "ak", fields.Value("AccessKey"))
	require.Equal(t, sign("sk", fields, nil), fields.Value("Signature"), "the signature covers CloudToken")
	hook.mu.Lock()
	defer hook.mu.Unlock()
	require.Equal(t, []int32{protocol.ResponseTopicNotExist}, hook.codes)
}
