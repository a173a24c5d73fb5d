package remoting

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func newTLSConfigNoCert() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

// selfSigned returns a self-signed certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rmqpush test broker"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func TestTLS(t *testing.T) {
	defer goleak.VerifyNone(t)
	cert, pool := selfSigned(t)
	s := startServer(t, WithServerTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	defer s.Close()

	t.Run("verification fails without the CA", func(t *testing.T) {
		c := newClient(t, WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
		defer c.Close()
		_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(codeEcho, nil, nil))
		var connErr *ConnError
		require.ErrorAs(t, err, &connErr)
		require.ErrorContains(t, err, "TLS handshake")
		var unknownAuthority x509.UnknownAuthorityError
		require.ErrorAs(t, err, &unknownAuthority)
	})
	t.Run("verification succeeds with the CA", func(t *testing.T) {
		c := newClient(t, WithTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
		defer c.Close()
		for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
			req := NewRequest(codeEcho, Fields{{"k", "v"}}, make([]byte, 100<<10))
			req.Serialize = st
			resp, err := c.Invoke(context.Background(), s.Addr(), req)
			require.NoError(t, err)
			require.Equal(t, "v", resp.ExtFields.Value("k"))
			require.Len(t, resp.Body, 100<<10)
		}
	})
	t.Run("plain client against a TLS server", func(t *testing.T) {
		c := newClient(t)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Invoke(ctx, s.Addr(), NewRequest(codeEcho, nil, nil))
		require.Error(t, err)
	})
}
