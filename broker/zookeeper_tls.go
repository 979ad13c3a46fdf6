package broker

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"

	"samsa/broker/security/tlsconf"
	"samsa/config"
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
