package broker

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"

	"samsa/broker/security/zkclient"
	"samsa/config"
	"samsa/zkutil"
)

// zookeeperTLS builds the TLS configuration of the broker's ZooKeeper
// client from zookeeper.ssl.* (KIP-515); nil when
// zookeeper.ssl.client.enable is false. With a key store the broker
// presents a client certificate, which ZooKeeper's x509 authentication
// provider turns into the broker's identity.
func zookeeperTLS(cfg *config.Broker) (*tls.Config, error) {
	c, err := zkclient.TLS(map[string]string{
		"zookeeper.ssl.client.enable":                     strconv.FormatBool(cfg.ZookeeperSSLClientEnable),
		"zookeeper.ssl.keystore.location":                 cfg.ZookeeperSSLKeystoreLocation,
		"zookeeper.ssl.keystore.password":                 cfg.ZookeeperSSLKeystorePassword,
		"zookeeper.ssl.keystore.type":                     cfg.ZookeeperSSLKeystoreType,
		"zookeeper.ssl.truststore.location":               cfg.ZookeeperSSLTruststoreLocation,
		"zookeeper.ssl.truststore.password":               cfg.ZookeeperSSLTruststorePassword,
		"zookeeper.ssl.truststore.type":                   cfg.ZookeeperSSLTruststoreType,
		"zookeeper.ssl.enabled.protocols":                 strings.Join(cfg.ZookeeperSSLEnabledProtocols, ","),
		"zookeeper.ssl.cipher.suites":                     strings.Join(cfg.ZookeeperSSLCipherSuites, ","),
		"zookeeper.ssl.endpoint.identification.algorithm": cfg.ZookeeperSSLEndpointIdentificationAlgorithm,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return c, nil
}

// zookeeperAuth is the broker's ZooKeeper identity: Options.ZooKeeperAuth,
// else the digest credential of the JAAS file's Client section
// (zkclient.Auth, shared with the tools: see zkclient's doc for why digest).
func (b *Broker) zookeeperAuth() ([]zkutil.Credential, error) {
	if b.opts.ZooKeeperAuth != nil {
		return b.opts.ZooKeeperAuth, nil
	}
	file, err := jaasFile(b.cfg)
	if err != nil {
		return nil, err
	}
	return zkclient.Auth(file), nil
}
