package client

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"slices"

	"github.com/rmqpush/rmqpush/remoting"
)

// ACL ext-field names (Java's SessionCredentials).
const (
	aclAccessKey     = "AccessKey"
	aclSecurityToken = "SecurityToken"
	aclSignature     = "Signature"
)

// aclHook signs every request as Java's AclClientRPCHook: AccessKey and SecurityToken
// are added to the ext fields, and Signature is Base64(HmacSHA1(secretKey, the ext-field
// values sorted by key, excluding Signature, followed by the body)). The SecurityToken
// is part of the signed content, which rocketmq-client-go leaves out.
type aclHook struct{ cred Credentials }

func newACLHook(c Credentials) *aclHook { return &aclHook{cred: c} }

// BeforeRequest signs req.
func (h *aclHook) BeforeRequest(_ string, req *remoting.Command) {
	req.ExtFields.Set(aclAccessKey, h.cred.AccessKey)
	if h.cred.SecurityToken != "" {
		req.ExtFields.Set(aclSecurityToken, h.cred.SecurityToken)
	}
	req.ExtFields.Set(aclSignature, sign(h.cred.SecretKey, req.ExtFields, req.Body))
}

// AfterResponse does nothing.
func (h *aclHook) AfterResponse(string, *remoting.Command, *remoting.Command) {}

// sign computes the signature of fields and body.
func sign(secretKey string, fields remoting.Fields, body []byte) string {
	keys := make([]string, 0, len(fields))
	for _, f := range fields {
		if f.Key != aclSignature {
			keys = append(keys, f.Key)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	mac := hmac.New(sha1.New, []byte(secretKey))
	for _, k := range keys {
		v, _ := fields.Get(k)
		mac.Write([]byte(v))
	}
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
