// Package principal names who sent a request, as Kafka's KafkaPrincipal does
// ("User:alice"). It is a leaf: the connection layer sets a connection's
// principal once it has authenticated it (TLS certificate, SASL), and the
// authorizer and the handlers read it. A connection nobody authenticated is
// User:ANONYMOUS, as on Kafka's PLAINTEXT listeners.
package principal
