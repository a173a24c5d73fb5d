package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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
