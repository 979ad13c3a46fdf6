// Package tlsconf builds Go TLS configurations from Kafka's ssl.* keys, for
// a broker's SSL and SASL_SSL listeners (server side) and its inter-broker
// connections (client side), and maps client certificates to principals.
//
// Keys (Kafka 2.8 names and defaults; per listener the broker passes
// listener.name.<l>.ssl.* over ssl.*, see Resolve):
//
//	ssl.keystore.type            JKS | PKCS12 | PEM          (JKS)
//	ssl.keystore.location        file                        (JKS: keystore-go, PKCS12: go-pkcs12, PEM: key + chain)
//	ssl.keystore.password        store password              (JKS, PKCS12)
//	ssl.key.password             key password                (JKS; defaults to the store password)
//	ssl.keystore.key             inline PEM PKCS#8 key       (PEM, KIP-651)
//	ssl.keystore.certificate.chain inline PEM chain          (PEM, KIP-651)
//	ssl.truststore.type/location/password, ssl.truststore.certificates (inline PEM)
//	ssl.client.auth              none | requested | required (none)
//	ssl.enabled.protocols        TLSv1.2,TLSv1.3
//	ssl.cipher.suites            Java (= IANA) names; TLS 1.3 suites are fixed in Go and accepted as given
//	ssl.endpoint.identification.algorithm  https (verify the host name, outbound only) | ""
//	ssl.principal.mapping.rules  DEFAULT | RULE:<regex>/<replacement>/[LU], ...
//
// A keystore is read when a Config is built or Reloaded; connections started
// afterwards get the new certificate (tls.Config.GetConfigForClient returns
// the current configuration), connections already open keep theirs.
//
// Principals: a client certificate's subject is formatted as Java's
// X500Principal.getName(RFC2253) does (RDNs from the last to the first,
// keywords CN, C, L, ST, O, OU, STREET, DC, UID, other attributes as
// OID=#hex) and the mapping rules are applied to that string, so the
// principal is the one Kafka derives ("User:CN=alice,OU=eng,O=acme,C=GB").
//
// Samsa differs: PEM key files may be unencrypted (Kafka 2.8 requires
// ssl.key.password for a PEM file); encrypted PEM keys (PKCS#8 PBES2) are
// refused with a clear error because Go's standard library cannot decrypt
// them.
//
// # Must never import
//
// Anything of Samsa's but broker/principal.
//
// # Concurrency
//
// A Config is safe for concurrent use; Reload swaps the configuration
// atomically.
package tlsconf
