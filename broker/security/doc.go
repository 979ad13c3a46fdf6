// Package security holds Samsa's transport security: TLS listeners
// (tlsconf), SASL authentication (sasl) and the SCRAM credential format and
// exchange (scram). The root package only documents the layout; the
// sub-packages are leaves the server and the broker assemble.
//
// # Must never import
//
// broker (root), broker/server, broker/storage, broker/replica, broker/group,
// controller. zkutil only through the broker's credential cache, never here.
//
// # Concurrency
//
// Nothing here starts goroutines. Each sub-package's doc says which values are
// safe to share.
package security
