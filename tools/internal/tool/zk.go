package tool

// ZooKeeper settings shared by the --zookeeper code paths.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"time"

	"samsa/broker/security/zkclient"
	"samsa/config"
	"samsa/zkutil"
)

// ZKTimeout is the session and connection timeout of the tools' ZooKeeper
// client (Kafka's TopicCommand uses 30 s for both).
const ZKTimeout = 30 * time.Second

// GroupOffsetsDir is /consumers/<g>/offsets, derived from zkutil's paths
// (STYLE S8.1: znode paths are spelled only in zkutil).
func GroupOffsetsDir(group string) string { return path.Dir(zkutil.ConsumerOffsetsPath(group, "t")) }

// ZKSecurity is how a tool secures its ZooKeeper session, as Kafka's tools
// do: TLS from the zookeeper.ssl.* keys (a --zk-tls-config-file, or
// kafka-acls' --authorizer-properties) and the digest identity of the JAAS
// Client section named by -Djava.security.auth.login.config in KAFKA_OPTS.
type ZKSecurity struct {
	// TLSProps holds zookeeper.ssl.* keys; TLS is on when
	// zookeeper.ssl.client.enable=true.
	TLSProps map[string]string
	// SetACL, when not nil, is zookeeper.set.acl as given; nil takes
	// Kafka's tools' default: secure ACLs when the session has an identity
	// (JAAS credentials or a TLS client certificate).
	SetACL *bool
	// Hint names the option that configures TLS in the command's syntax,
	// for the error when no session can be opened.
	Hint string
	// SessionTimeout and ConnectionTimeout, when not zero, replace
	// ZKTimeout (zookeeper-security-migration's --zookeeper.*.timeout).
	SessionTimeout, ConnectionTimeout time.Duration
}

// ZKTLSKeys are the keys a --zk-tls-config-file may set.
var ZKTLSKeys = zkclient.TLSKeys

// ReadZKTLSFile reads a --zk-tls-config-file: a Java properties file of
// which only ZKTLSKeys count (Kafka loads it with
// Utils.loadProps(file, ZkSslConfigToSystemPropertyMap.keys)); each prefix
// given also admits <prefix><key> (kafka-acls: "authorizer.").
func ReadZKTLSFile(path string, prefixes ...string) (map[string]string, error) {
	all, err := config.ReadPropertiesFile(path)
	if err != nil {
		return nil, Error(UserMessage(err))
	}
	out := map[string]string{}
	for _, k := range ZKTLSKeys {
		for _, name := range append([]string{k}, prefixes...) {
			if name != k {
				name += k
			}
			if v, ok := all[name]; ok {
				out[name] = v
			}
		}
	}
	return out, nil
}

// ConnectZK opens the tool's ZooKeeper session on connect with Kafka's
// 30 s timeouts (bounded by env.Context too, when set) and sec's TLS and
// identity. When no session opens in time the error says so in Kafka's
// words and, without TLS, suggests the TLS option: a plaintext client on a
// TLS-only port sees nothing but closed connections.
func ConnectZK(env Env, component, connect string, sec ZKSecurity) (*zkutil.Client, error) {
	// ZKClientConfig starts from the JVM's zookeeper.* system properties;
	// the command's own settings override them.
	props := zkclient.JavaOptionTLS()
	maps.Copy(props, sec.TLSProps)
	tlsCfg, err := zkclient.TLS(props)
	if err != nil {
		return nil, err
	}
	jaas, err := zkclient.LoadJAAS("")
	if err != nil {
		return nil, err
	}
	auth := zkclient.Auth(jaas)
	secure := len(auth) > 0 || (tlsCfg != nil && len(tlsCfg.Certificates) > 0)
	if sec.SetACL != nil {
		secure = *sec.SetACL
	}
	parent := env.Context
	if parent == nil {
		parent = context.Background()
	}
	session, conn := cmp.Or(sec.SessionTimeout, ZKTimeout), cmp.Or(sec.ConnectionTimeout, ZKTimeout)
	ctx, cancel := context.WithTimeout(parent, conn)
	defer cancel()
	zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: session, ConnectionTimeout: conn,
		Logger: Logger(env, component), TLS: tlsCfg, Auth: auth, SecureACLs: secure})
	if errors.Is(err, zkutil.ErrNoServer) {
		hint := "is the ZooKeeper address right and the server up?"
		if tlsCfg == nil {
			hint += " A TLS client port needs zookeeper.ssl.client.enable=true"
			if sec.Hint != "" {
				hint += " in " + sec.Hint
			}
		} else {
			hint += " Over TLS, check zookeeper.ssl.* against the server's certificates"
		}
		return nil, fmt.Errorf("Timed out waiting for connection while in state: CONNECTING (%v; %s)", err, hint)
	}
	return zk, err
}
