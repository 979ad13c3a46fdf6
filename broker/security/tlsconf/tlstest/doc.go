// Package tlstest makes throw-away certificates for tests: a CA, server
// certificates for 127.0.0.1/localhost and client certificates with a chosen
// subject, written as PEM, PKCS12 (go-pkcs12's encoder) or JKS (keytool, as
// operators make them). Only tests import it.
//
// # Must never import
//
// Anything of Samsa's.
//
// # Concurrency
//
// A CA is safe for concurrent use once made.
package tlstest
