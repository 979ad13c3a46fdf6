package zkclient

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"samsa/broker/security/sasl"
	"samsa/broker/security/tlsconf"
	"samsa/zkutil"
)

// TLSKeys are the keys a --zk-tls-config-file may set (Kafka's
// ZkSslConfigToSystemPropertyMap); a tool ignores every other key, as
// Kafka's Utils.loadProps(file, keys) does.
var TLSKeys = []string{
	"zookeeper.clientCnxnSocket",
	"zookeeper.ssl.client.enable",
	"zookeeper.ssl.keystore.location",
	"zookeeper.ssl.keystore.password",
	"zookeeper.ssl.keystore.type",
	"zookeeper.ssl.truststore.location",
	"zookeeper.ssl.truststore.password",
	"zookeeper.ssl.truststore.type",
	"zookeeper.ssl.protocol",
	"zookeeper.ssl.enabled.protocols",
	"zookeeper.ssl.cipher.suites",
	"zookeeper.ssl.endpoint.identification.algorithm",
	"zookeeper.ssl.crl.enable",
	"zookeeper.ssl.ocsp.enable",
}

// systemProps maps each TLS key to the JVM system property ZooKeeper's own
// client reads (Kafka's ZkSslConfigToSystemPropertyMap).
var systemProps = map[string]string{
	"zookeeper.clientCnxnSocket":                      "zookeeper.clientCnxnSocket",
	"zookeeper.ssl.client.enable":                     "zookeeper.client.secure",
	"zookeeper.ssl.keystore.location":                 "zookeeper.ssl.keyStore.location",
	"zookeeper.ssl.keystore.password":                 "zookeeper.ssl.keyStore.password",
	"zookeeper.ssl.keystore.type":                     "zookeeper.ssl.keyStore.type",
	"zookeeper.ssl.truststore.location":               "zookeeper.ssl.trustStore.location",
	"zookeeper.ssl.truststore.password":               "zookeeper.ssl.trustStore.password",
	"zookeeper.ssl.truststore.type":                   "zookeeper.ssl.trustStore.type",
	"zookeeper.ssl.protocol":                          "zookeeper.ssl.protocol",
	"zookeeper.ssl.enabled.protocols":                 "zookeeper.ssl.enabledProtocols",
	"zookeeper.ssl.cipher.suites":                     "zookeeper.ssl.ciphersuites",
	"zookeeper.ssl.endpoint.identification.algorithm": "zookeeper.ssl.hostnameVerification",
	"zookeeper.ssl.crl.enable":                        "zookeeper.ssl.crl",
	"zookeeper.ssl.ocsp.enable":                       "zookeeper.ssl.ocsp",
}

// JavaOptionTLS is the TLS keys set as ZooKeeper client system properties
// in KAFKA_OPTS (-Dzookeeper.client.secure=true,
// -Dzookeeper.ssl.keyStore.location=..., ...), under their Kafka names:
// what a Kafka tool's ZKClientConfig starts from before its
// --zk-tls-config-file overrides it. -Dzookeeper.ssl.hostnameVerification
// is a boolean: false maps to an empty endpoint identification algorithm.
func JavaOptionTLS() map[string]string {
	out := map[string]string{}
	for _, k := range TLSKeys {
		v, ok := javaOptLookup(systemProps[k])
		if !ok {
			continue
		}
		if k == "zookeeper.ssl.endpoint.identification.algorithm" {
			if strings.EqualFold(v, "false") {
				v = ""
			} else {
				v = "HTTPS"
			}
		}
		out[k] = v
	}
	return out
}

// TLS builds the ZooKeeper client's TLS configuration from zookeeper.ssl.*
// keys (Kafka's names, values as written in a properties file); nil when
// zookeeper.ssl.client.enable is not true. An absent
// endpoint.identification.algorithm means HTTPS, Kafka's default.
func TLS(props map[string]string) (*tls.Config, error) {
	get := func(k string) string { return strings.TrimSpace(props["zookeeper."+k]) }
	if !strings.EqualFold(get("ssl.client.enable"), "true") {
		return nil, nil
	}
	ident, ok := props["zookeeper.ssl.endpoint.identification.algorithm"]
	if !ok {
		ident = "HTTPS"
	}
	keys := map[string]string{
		"ssl.keystore.location":                 get("ssl.keystore.location"),
		"ssl.keystore.password":                 get("ssl.keystore.password"),
		"ssl.keystore.type":                     StoreType(get("ssl.keystore.type"), get("ssl.keystore.location")),
		"ssl.truststore.location":               get("ssl.truststore.location"),
		"ssl.truststore.password":               get("ssl.truststore.password"),
		"ssl.truststore.type":                   StoreType(get("ssl.truststore.type"), get("ssl.truststore.location")),
		"ssl.enabled.protocols":                 get("ssl.enabled.protocols"),
		"ssl.cipher.suites":                     get("ssl.cipher.suites"),
		"ssl.endpoint.identification.algorithm": strings.ToLower(strings.TrimSpace(ident)),
	}
	c, err := tlsconf.New(keys, false)
	if err != nil {
		return nil, fmt.Errorf("zookeeper.ssl.*: %w", err)
	}
	// No host: zkutil names each server as it dials it.
	return c.ClientTLS(""), nil
}

// StoreType is ZooKeeper's X509Util rule: the configured type, else the
// file extension's, else JKS.
func StoreType(typ, location string) string {
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

// javaOpt is the value of -D<name>=<value> in KAFKA_OPTS (the last one
// wins, as on a JVM command line); "" when absent.
func javaOpt(name string) string {
	v, _ := javaOptLookup(name)
	return v
}

// javaOptLookup is javaOpt, telling an absent option from an empty one.
func javaOptLookup(name string) (v string, ok bool) {
	for _, f := range strings.Fields(os.Getenv("KAFKA_OPTS")) {
		if s, found := strings.CutPrefix(f, "-D"+name+"="); found {
			v, ok = s, true
		}
	}
	return v, ok
}

// LoadJAAS reads the JAAS file: path (the broker's
// java.security.auth.login.config key), else
// -Djava.security.auth.login.config in KAFKA_OPTS; empty when neither is set.
func LoadJAAS(path string) (sasl.JAAS, error) {
	if path == "" {
		path = javaOpt("java.security.auth.login.config")
	}
	if path == "" {
		return sasl.JAAS{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("java.security.auth.login.config: %w", err)
	}
	return sasl.ParseJAAS(string(data))
}

// ClientSection is the JAAS section of the ZooKeeper client:
// -Dzookeeper.sasl.clientconfig in KAFKA_OPTS, else Client.
func ClientSection() string {
	if s := javaOpt("zookeeper.sasl.clientconfig"); s != "" {
		return s
	}
	return "Client"
}

// Auth is the ZooKeeper digest credential of file's client section (the
// first login module with a username); nil when there is none.
func Auth(file sasl.JAAS) []zkutil.Credential {
	for _, m := range file[ClientSection()] {
		user, pass := m.Options["username"], m.Options["password"]
		if user != "" {
			return []zkutil.Credential{{Scheme: "digest", Auth: []byte(user + ":" + pass)}}
		}
	}
	return nil
}
