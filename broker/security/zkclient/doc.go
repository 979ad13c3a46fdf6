// Package zkclient is the security side of every Samsa ZooKeeper client —
// the broker's and the tools' (kafka-configs --zookeeper, kafka-acls
// --authorizer-properties, zookeeper-shell): TLS from Kafka's zookeeper.ssl.*
// keys (KIP-515) and the digest identity of the JAAS file's Client section.
// One place, so a tool reaches a TLS-only ZooKeeper port with exactly the
// settings and defaults the broker uses.
//
// TLS keys (Kafka 2.8 names, KafkaConfig.ZkSslConfigToSystemPropertyMap;
// a tool's --zk-tls-config-file holds the same names, other keys ignored):
//
//	zookeeper.ssl.client.enable            true: TLS; otherwise TLS returns nil
//	zookeeper.clientCnxnSocket             accepted, no effect (Java's Netty socket class)
//	zookeeper.ssl.keystore.location/password/type   client certificate (ZooKeeper's x509 identity)
//	zookeeper.ssl.truststore.location/password/type the servers' CA
//	zookeeper.ssl.protocol                 accepted; Go negotiates from enabled.protocols
//	zookeeper.ssl.enabled.protocols        TLSv1.2,TLSv1.3 (empty: both)
//	zookeeper.ssl.cipher.suites            Java (IANA) names (empty: Go's defaults)
//	zookeeper.ssl.endpoint.identification.algorithm  HTTPS (default): the certificate names the host; "": chain only
//	zookeeper.ssl.crl.enable, zookeeper.ssl.ocsp.enable  accepted, no effect
//
// The tools also take these keys as the JVM system properties ZooKeeper's
// client reads, from KAFKA_OPTS (-Dzookeeper.client.secure=true,
// -Dzookeeper.ssl.keyStore.location=..., JavaOptionTLS); a TLS file or
// authorizer property overrides them, as in Kafka.
//
// A store type left unset follows ZooKeeper's X509Util: the file extension
// (.p12/.pfx PKCS12, .pem PEM), else JKS.
//
// JAAS: the file is java.security.auth.login.config, else
// -Djava.security.auth.login.config=<file> in KAFKA_OPTS (how Kafka's
// scripts hand JVM options to every tool); the section is Client, or
// -Dzookeeper.sasl.clientconfig=<name>. Its username/password become the
// ZooKeeper digest credential "user:password". Kafka authenticates that
// section with SASL DIGEST-MD5 (identity sasl:<user>); go-zookeeper has no
// SASL, so Samsa's identity is digest:<user>:<hash>, the same for brokers
// and tools with the same section, which is what zookeeper.set.acl needs.
package zkclient
