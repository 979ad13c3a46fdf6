package broker

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"

	"samsa/broker/security/tlsconf"
	"samsa/config"
	"samsa/zkutil"
)

// zookeeperTLS builds the TLS configuration of the broker's ZooKeeper
// client from zookeeper.ssl.* (KIP-515); nil when
// zookeeper.ssl.client.enable is false. With a key store the broker
// presents a client certificate, which ZooKeeper's x509 authentication
// provider turns into the broker's identity.
func zookeeperTLS(cfg *config.Broker) (*tls.Config, error) {
	if !cfg.ZookeeperSSLClientEnable {
		return nil, nil
	}
	keys := map[string]string{
		"ssl.keystore.location":                 cfg.ZookeeperSSLKeystoreLocation,
		"ssl.keystore.password":                 cfg.ZookeeperSSLKeystorePassword,
		"ssl.keystore.type":                     storeType(cfg.ZookeeperSSLKeystoreType, cfg.ZookeeperSSLKeystoreLocation),
		"ssl.truststore.location":               cfg.ZookeeperSSLTruststoreLocation,
		"ssl.truststore.password":               cfg.ZookeeperSSLTruststorePassword,
		"ssl.truststore.type":                   storeType(cfg.ZookeeperSSLTruststoreType, cfg.ZookeeperSSLTruststoreLocation),
		"ssl.enabled.protocols":                 strings.Join(cfg.ZookeeperSSLEnabledProtocols, ","),
		"ssl.cipher.suites":                     strings.Join(cfg.ZookeeperSSLCipherSuites, ","),
		"ssl.endpoint.identification.algorithm": strings.ToLower(cfg.ZookeeperSSLEndpointIdentificationAlgorithm),
	}
	c, err := tlsconf.New(keys, false)
	if err != nil {
		return nil, fmt.Errorf("broker: zookeeper.ssl.*: %w", err)
	}
	// No host: zkutil names each server as it dials it.
	return c.ClientTLS(""), nil
}

// storeType is ZooKeeper's X509Util rule: the configured type, else the
// file extension's, else JKS.
func storeType(typ, location string) string {
	if typ != "" {
		return strings.ToUpper(typ)
	}
	switch strings.ToLower(filepath.Ext(location)) {
	case ".p12", ".pfx":
		return "PKCS12"
	case ".pem":
		return "PEM"
	}
	return "JKS"
}

// zookeeperAuth is the broker's ZooKeeper identity: Options.ZooKeeperAuth,
// else the username/password of the JAAS file's Client section (Kafka's
// zookeeper.sasl.clientconfig default name), added as ZooKeeper digest
// "user:password". Kafka's ZooKeeper client authenticates that section with
// SASL DIGEST-MD5 (identity sasl:<user>); go-zookeeper has no SASL, so
// Samsa's identity is digest:<user>:<hash> — the same for every Samsa
// broker with the same section, which is what zookeeper.set.acl needs.
func (b *Broker) zookeeperAuth() ([]zkutil.Credential, error) {
	if b.opts.ZooKeeperAuth != nil {
		return b.opts.ZooKeeperAuth, nil
	}
	file, err := jaasFile(b.cfg)
	if err != nil {
		return nil, err
	}
	for _, m := range file["Client"] {
		user, pass := m.Options["username"], m.Options["password"]
		if user != "" {
			return []zkutil.Credential{{Scheme: "digest", Auth: []byte(user + ":" + pass)}}, nil
		}
	}
	return nil, nil
}
