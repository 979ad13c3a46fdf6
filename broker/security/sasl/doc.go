// Package sasl is the server side of Kafka's SASL authentication (Kafka
// 2.8's SaslServerAuthenticator with PlainSaslServer and ScramSaslServer),
// as pure logic: the connection layer (broker/server) frames the tokens and
// calls a Session; this package decides.
//
// Mechanisms: PLAIN (RFC 4616; users from the JAAS user_<name>="password"
// options, compared in constant time; an authzid other than the user is
// refused, CVE-2017-12610) and SCRAM-SHA-256/512 (package scram; credentials
// from ZooKeeper /config/users/<user>, looked up through Config.SCRAM).
// GSSAPI and OAUTHBEARER are not supported: Handshake answers
// UNSUPPORTED_SASL_MECHANISM for them.
//
// JAAS: ParseJAAS reads Kafka's JAAS syntax, both a java.security.auth.login.config
// file (sections "KafkaServer { ... };", "<listener>.KafkaServer", "Client")
// and a single sasl.jaas.config value ("<LoginModule> required k=\"v\" ...;").
// Precedence, as Kafka's JaasContext.loadServerContext:
// listener.name.<l>.<mech>.sasl.jaas.config, then the file's
// "<listener lower-cased>.KafkaServer" section, then "KafkaServer". Only the
// PlainLoginModule and ScramLoginModule classes are accepted, so a dynamic
// config can never load an arbitrary login module (CVE-2025-27819).
//
// Failures: an AuthError carries Kafka's message for the client (the
// mechanism's own for explicit failures such as a wrong PLAIN password or an
// authzid mismatch, otherwise "Authentication failed during authentication
// due to invalid credentials with SASL mechanism <M>"), answered as
// SASL_AUTHENTICATION_FAILED.
//
// # Must never import
//
// broker (root), broker/server, zkutil, controller, kmsg: it takes and
// returns plain values.
//
// # Concurrency
//
// A Config and the JAAS values are immutable and shared; a Session belongs to
// one connection goroutine.
package sasl
