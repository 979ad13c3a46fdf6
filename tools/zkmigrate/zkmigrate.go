package zkmigrate

// zookeeper-security-migration: set the ACLs of Kafka's znodes to secure
// or unsecure (Kafka 2.8 ZkSecurityMigrator):
//
//	samsa zookeeper-security-migration --zookeeper.acl secure --zookeeper.connect localhost:2181[/chroot]
//	    [--zookeeper.session.timeout 30000] [--zookeeper.connection.timeout 30000]
//	    [--enable.path.check] [--zk-tls-config-file zk-tls.properties]
//
// Behaviour: as Kafka's, it needs an identity (a JAAS file in KAFKA_OPTS,
// or a TLS client certificate) before it connects, and says so in Kafka's
// words otherwise; --zookeeper.acl other than secure or unsecure prints the
// usage message and exits 1; success prints nothing (Kafka logs at INFO,
// which its tools' log4j configuration hides).

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"samsa/broker/security/zkclient"
	"samsa/tools/internal/tool"
)

const usageMessage = "ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up ZooKeeper authentication."

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "zookeeper-security-migration",
		Usage: "set the ACLs of Kafka's znodes to secure (creator-only writes) or unsecure (open)",
		Description: usageMessage + "\n\nThe identity is the JAAS Client section of -Djava.security.auth.login.config in KAFKA_OPTS" +
			" (its username/password as a ZooKeeper digest identity) or the TLS client certificate of --zk-tls-config-file.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "zookeeper.acl", Usage: "Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. The options are 'secure' and 'unsecure'"},
			&cli.StringFlag{Name: "zookeeper.connect", Value: "localhost:2181", Usage: "Sets the ZooKeeper connect string (ensemble). This parameter takes a comma-separated list of host:port pairs."},
			&cli.IntFlag{Name: "zookeeper.session.timeout", Value: 30000, Usage: "Sets the ZooKeeper session timeout."},
			&cli.IntFlag{Name: "zookeeper.connection.timeout", Value: 30000, Usage: "Sets the ZooKeeper connection timeout."},
			&cli.BoolFlag{Name: "enable.path.check", Usage: "Checks if all the root paths exist in ZooKeeper before migration. If not, exit the command."},
			&cli.StringFlag{Name: "zk-tls-config-file", Usage: "Identifies the file where ZooKeeper client TLS connectivity properties are defined.  Any properties other than " +
				strings.Join(zkclient.TLSKeys, ", ") + " are ignored."},
		},
		Action: func(c *cli.Context) error {
			err := run(c, env)
			var ee tool.ExitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			fmt.Fprintln(env.Stderr, tool.UserMessage(err))
			return tool.ExitError{Code: 1}
		},
	}
}

func run(c *cli.Context, env tool.Env) error {
	var secure bool
	switch c.String("zookeeper.acl") {
	case "secure":
		secure = true
	case "unsecure":
	default:
		fmt.Fprintf(env.Stderr, "%s\nRun 'samsa zookeeper-security-migration --help' for the options.\n", usageMessage)
		return tool.ExitError{Code: 1}
	}
	sec := tool.ZKSecurity{Hint: "--zk-tls-config-file", SetACL: &secure,
		SessionTimeout:    time.Duration(c.Int("zookeeper.session.timeout")) * time.Millisecond,
		ConnectionTimeout: time.Duration(c.Int("zookeeper.connection.timeout")) * time.Millisecond}
	if f := c.String("zk-tls-config-file"); f != "" {
		props, err := tool.ReadZKTLSFile(f)
		if err != nil {
			return err
		}
		sec.TLSProps = props
	}
	if err := checkIdentity(sec.TLSProps, env); err != nil {
		return err
	}
	zk, err := tool.ConnectZK(env, "zookeeper-security-migration", c.String("zookeeper.connect"), sec)
	if err != nil {
		return err
	}
	defer zk.Close()
	m := &migrator{zk: zk, secure: secure, pathCheck: c.Bool("enable.path.check"), out: env.Stdout, errOut: env.Stderr}
	_, err = m.run()
	return err
}

// checkIdentity refuses to run without an identity to own the znodes,
// with Kafka's messages: neither a JAAS file nor a TLS client certificate,
// or a JAAS file whose client section gives no credentials Samsa can use.
func checkIdentity(tlsFileProps map[string]string, env tool.Env) error {
	props := zkclient.JavaOptionTLS()
	maps.Copy(props, tlsFileProps)
	tlsClientAuth := props["zookeeper.ssl.client.enable"] == "true" && props["zookeeper.ssl.keystore.location"] != ""
	jaasFile := loginConfig()
	if jaasFile == "" && !tlsClientAuth {
		fmt.Fprintln(env.Stderr, "ERROR: No JAAS configuration file has been specified and no TLS client certificate has been specified."+
			" Please make sure that you set the system property java.security.auth.login.config or provide a ZooKeeper client TLS"+
			" configuration via --zk-tls-config-file <filename> identifying at least zookeeper.ssl.client.enable,"+
			" zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location")
		return tool.Error("java.lang.IllegalArgumentException: Incorrect configuration")
	}
	if tlsClientAuth {
		return nil
	}
	jaas, err := zkclient.LoadJAAS(jaasFile)
	if err != nil {
		return err
	}
	if _, ok := jaas[zkclient.ClientSection()]; !ok {
		fmt.Fprintf(env.Stdout, "ERROR: Security isn't enabled, most likely the file isn't set properly: %s\n", jaasFile)
		return tool.Error("java.lang.IllegalArgumentException: Incorrect configuration")
	}
	if len(zkclient.Auth(jaas)) == 0 {
		return tool.Errorf("ERROR: the %s section of %s has no username and password: Samsa authenticates to ZooKeeper with"+
			" digest credentials or a TLS client certificate only (go-zookeeper has no SASL)", zkclient.ClientSection(), jaasFile)
	}
	return nil
}

// loginConfig is -Djava.security.auth.login.config in KAFKA_OPTS (the
// last one wins, as on a JVM command line), the JAAS file Kafka's tool
// reads from its system property.
func loginConfig() string {
	v := ""
	for _, f := range strings.Fields(os.Getenv("KAFKA_OPTS")) {
		if s, ok := strings.CutPrefix(f, "-Djava.security.auth.login.config="); ok {
			v = s
		}
	}
	return v
}
