package configs

// kafka-configs --zookeeper for broker entities: Kafka 2.8's
// ConfigCommand.alterConfigWithZk broker checks and preProcessBrokerConfigs,
// which turn the configs of an --alter into what is stored in
// /config/brokers/<id>:
//
//   - the replication throttles alone (Kafka's
//     BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning) are stored as
//     given, at any time;
//   - any other added config is refused while the broker is registered in
//     /brokers/ids (for the cluster default: while any broker is), with
//     Kafka's "--bootstrap-server option must be specified" message and
//     nothing written: this path is for bootstrapping before the brokers
//     start (encrypted passwords in ZooKeeper, no clear ones in
//     server.properties); running brokers take changes through
//     IncrementalAlterConfigs, which validates them against the live
//     config. Deleted keys are not checked, as in Kafka;
//   - every password.encoder.* key among them is taken out: it configures the
//     encryption and is never stored;
//   - DynamicBrokerConfig.validateConfigs' rules that the plain key checks
//     do not cover: an ssl.* security config needs a listener prefix, and a
//     per-broker config (security and listener configs, any
//     listener.name.<l>.* but max.connections and
//     max.connection.creation.rate) is refused on the cluster default;
//   - every password config (a key that ends with a dynamic password key of
//     Samsa's broker, so listener- and mechanism-prefixed forms count too)
//     is encrypted with broker/security/pwencoder, Kafka's PasswordEncoder
//     format, which the broker decodes with its own password.encoder.secret.
//     Without password.encoder.secret among the added configs the change is
//     refused with Kafka's message and nothing is written.
//
// Samsa differs: password.encoder.keyfactory.algorithm given here is
// honoured (Kafka's ConfigCommand ignores it and takes its default); the
// stored string names its algorithm, so the broker decodes either.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"samsa/broker/security/pwencoder"
	"samsa/config"
	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// passwordEncoderPrefix starts the keys that configure the encryption.
const passwordEncoderPrefix = "password.encoder."

// listenerPrefix starts a per-listener override (Kafka's
// ListenerConfigRegex, listener\.name\.[^.]*\.(.*)).
const listenerPrefix = "listener.name."

// securityConfigs are Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic
// only with a listener prefix.
var securityConfigs = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

// listenerReconfigurable are the rest of Kafka 2.8's
// DynamicListenerConfig.ReconfigurableConfigs that are per-broker
// (max.connections and max.connection.creation.rate are cluster-level).
var listenerReconfigurable = []string{
	"advertised.listeners", "listeners", "listener.security.protocol.map", "principal.builder.class",
	"ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols",
	"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm",
	"ssl.secure.random.implementation", "ssl.client.auth", "ssl.engine.factory.class",
	"sasl.mechanism.inter.broker.protocol", "sasl.jaas.config", "sasl.enabled.mechanisms",
	"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
	"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
	"sasl.kerberos.principal.to.local.rules", "sasl.login.refresh.window.factor",
	"sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
}

// clusterLevelListenerConfigs may carry a listener prefix on the default.
var clusterLevelListenerConfigs = []string{"max.connections", "max.connection.creation.rate"}

// listenerMechanismConfigs come as listener.name.<l>.<mechanism>.<key>
// (Kafka's ListenerMechanismConfigs).
var listenerMechanismConfigs = []string{
	"sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class",
	"sasl.server.callback.handler.class", "connections.max.reauth.ms",
}

// listenerBaseName is the key a listener-prefixed name overrides
// (listener.name.l.ssl.keystore.password: ssl.keystore.password;
// listener.name.l.plain.sasl.jaas.config: sasl.jaas.config); ok is false
// for a name without the prefix.
func listenerBaseName(name string) (base string, ok bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return name, false
	}
	_, base, ok = strings.Cut(rest, ".")
	if !ok {
		return name, false
	}
	for _, m := range listenerMechanismConfigs {
		if strings.HasSuffix(base, "."+m) {
			return m, true
		}
	}
	return base, true
}

// isPasswordConfig is Kafka's DynamicBrokerConfig.isPasswordConfig: the
// name ends with a dynamic password key (over Samsa's key table, so the
// tool encrypts exactly what the broker decrypts).
func isPasswordConfig(name string) bool {
	for _, k := range config.BrokerKeys {
		if k.Dynamic && k.Password && strings.HasSuffix(name, k.Name) {
			return true
		}
	}
	return false
}

// zkBootstrapOnly is the reason Kafka gives for refusing broker configs
// through ZooKeeper while brokers run.
const zkBootstrapOnly = "Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers" +
	" are started to enable encrypted password configs to be stored in ZooKeeper."

// brokerConfigsZK checks and rewrites add, the configs of an --alter of
// broker entity e through ZooKeeper (see the file comment): throttles alone
// pass as they are; other configs are refused while e's broker (any broker,
// for the default) is registered, and preprocessed otherwise.
func brokerConfigsZK(zk *zkutil.Client, e configEntity, add map[string]string) error {
	var dynamic []string
	for _, k := range tool.SortedKeys(add) {
		if !kafkaOnlyBrokerKeys[k] {
			dynamic = append(dynamic, k)
		}
	}
	if len(dynamic) == 0 {
		return nil
	}
	running, err := brokerRunning(zk, e)
	if err != nil {
		return err
	}
	if running != "" {
		return tool.Errorf("requirement failed: --bootstrap-server option must be specified to update broker configs Set(%s). %s %s",
			strings.Join(dynamic, ", "), running, zkBootstrapOnly)
	}
	return preProcessBrokerConfigs(add, !e.isDefault)
}

// brokerRunning is Kafka's test of whether broker entity e is in use: for
// a broker id, its /brokers/ids/<id> registration (a malformed one counts:
// the znode is there); for the default, any registration. It returns the
// clause of Kafka's refusal, "" when nothing runs.
func brokerRunning(zk *zkutil.Client, e configEntity) (string, error) {
	if e.isDefault {
		ids, err := zk.GetBrokerIDs()
		if err != nil || len(ids) == 0 {
			return "", err
		}
		return "for default cluster if any broker is running.", nil
	}
	id, err := strconv.ParseInt(e.name, 10, 32)
	if err != nil {
		return "", err // parseEntity took only integer ids
	}
	switch _, err := zk.GetBroker(int32(id)); {
	case errors.Is(err, zkutil.ErrNoNode):
		return "", nil
	case err != nil && !errors.Is(err, zkutil.ErrMalformed):
		return "", err
	}
	return fmt.Sprintf("when broker %s is running.", e.name), nil
}

// preProcessBrokerConfigs rewrites add, the configs of an --alter of a
// broker entity that are not throttles alone, into their stored form (see
// the file comment).
func preProcessBrokerConfigs(add map[string]string, perBroker bool) error {
	encoderConfigs := map[string]string{}
	for k, v := range add {
		if strings.HasPrefix(k, passwordEncoderPrefix) {
			encoderConfigs[k] = v
			delete(add, k)
		}
	}
	if err := checkBrokerConfigLevels(add, perBroker); err != nil {
		return err
	}
	var passwords []string
	for _, k := range tool.SortedKeys(add) {
		if isPasswordConfig(k) {
			passwords = append(passwords, k)
		}
	}
	if len(passwords) == 0 {
		return nil
	}
	if encoderConfigs["password.encoder.secret"] == "" {
		return tool.Errorf("requirement failed: password.encoder.secret must be specified to update Set(%s)."+
			" Other password encoder configs like cipher algorithm and iterations may also be specified"+
			" to override the default encoding parameters. Password encoder configs will not be persisted"+
			" in ZooKeeper.", strings.Join(passwords, ", "))
	}
	enc, err := newPasswordEncoder(encoderConfigs)
	if err != nil {
		return err
	}
	for _, k := range passwords {
		if add[k], err = enc.Encode(add[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkBrokerConfigLevels is the part of Kafka's
// DynamicBrokerConfig.validateConfigs about where a key may be set.
func checkBrokerConfigLevels(add map[string]string, perBroker bool) error {
	var unprefixed, brokerOnly []string
	for _, k := range tool.SortedKeys(add) {
		if slices.Contains(securityConfigs, k) {
			unprefixed = append(unprefixed, k)
		}
		base, prefixed := listenerBaseName(k)
		switch {
		case prefixed && !slices.Contains(clusterLevelListenerConfigs, base),
			!prefixed && (slices.Contains(securityConfigs, k) || slices.Contains(listenerReconfigurable, k)):
			brokerOnly = append(brokerOnly, k)
		}
	}
	if len(unprefixed) > 0 {
		return tool.Errorf("These security configs can be dynamically updated only per-listener using the listener prefix: Set(%s)",
			strings.Join(unprefixed, ", "))
	}
	if !perBroker && len(brokerOnly) > 0 {
		return tool.Errorf("Cannot update these configs at default cluster level, broker id must be specified: Set(%s)",
			strings.Join(brokerOnly, ", "))
	}
	return nil
}

// newPasswordEncoder is Kafka's ConfigCommand.createPasswordEncoder over
// the password.encoder.* keys given with --add-config.
func newPasswordEncoder(c map[string]string) (*pwencoder.Encoder, error) {
	num := func(key string, def int) (int, error) {
		v, ok := c[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, tool.Errorf("Invalid value %s for configuration %s: Not a number of type INT", v, key)
		}
		return n, nil
	}
	keyLength, err := num("password.encoder.key.length", pwencoder.DefaultKeyLength)
	if err != nil {
		return nil, err
	}
	iterations, err := num("password.encoder.iterations", pwencoder.DefaultIterations)
	if err != nil {
		return nil, err
	}
	enc, err := pwencoder.New(c["password.encoder.secret"], c["password.encoder.keyfactory.algorithm"],
		c["password.encoder.cipher.algorithm"], keyLength, iterations)
	if err != nil {
		return nil, tool.Error(fmt.Sprintf("Invalid password encoder configs: %v", err))
	}
	return enc, nil
}
