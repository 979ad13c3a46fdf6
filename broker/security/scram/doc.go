// Package scram implements the server side of SCRAM-SHA-256 and
// SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka 2.8's ScramSaslServer does, and
// Kafka's credential format (ScramCredentialUtils), which brokers read from
// /config/users/<user> under the keys "SCRAM-SHA-256" / "SCRAM-SHA-512":
//
//	salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>
//
// (standard padded Base64; exactly these four keys). Passwords are used as
// their UTF-8 bytes with no SASLprep, as Kafka does.
//
// Exchange (one Server per authentication):
//
//	client-first  n,[a=<authzid>],n=<user>,r=<cnonce>[,ext=v...]
//	server-first  r=<cnonce><snonce>,s=<b64 salt>,i=<iterations>
//	client-final  c=<b64 gs2 header>,r=<nonce>,p=<b64 proof>
//	server-final  v=<b64 server signature>
//
// Checks, each a CVE or an RFC rule: authzid, if given, equals the user
// (CVE-2017-12610); stored iterations >= 4096; the client-final nonce equals
// the nonce the server sent, which starts with the client's (CVE-2024-56128);
// the channel binding is the gs2 header of client-first ("biws" for "n,,");
// the proof is compared in constant time (crypto/subtle, CVE-2021-38153).
// Failures never produce "e=" messages: the caller answers with
// SASL_AUTHENTICATION_FAILED, as Kafka does.
//
// # Must never import
//
// Anything of Samsa's: it is a leaf (standard library only; crypto/pbkdf2 and
// crypto/hmac rather than a SCRAM library, see docs/dependencies.md).
//
// # Concurrency
//
// A Server is used by one connection goroutine at a time. Credential and
// Mechanism values are immutable and safe to share.
package scram
