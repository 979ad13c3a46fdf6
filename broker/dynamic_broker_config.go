package broker

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/security/pwencoder"
	"samsa/config"
	"samsa/zkutil"
)

// Dynamic broker configs (Kafka 2.8's ZkAdminManager for BROKER resources):
// IncrementalAlterConfigs and AlterConfigs on a broker resource validate the
// change and store it in /config/brokers/<id> (or /config/brokers/<default>
// for the empty resource name), announced under /config/changes as "brokers/<id>",
// exactly where kafka-configs.sh --entity-type brokers writes. Password
// configs (ssl.*.password, ssl.keystore.key, *.sasl.jaas.config, with or
// without a listener prefix) are stored encrypted with password.encoder.secret
// in Kafka's PasswordEncoder format (broker/security/pwencoder), refused
// without a secret and refused on the cluster-default entity, as Kafka 2.8's
// DynamicBrokerConfig.toPersistentProps. Running
// brokers apply the topic-default keys, the connection limits and the
// listener keystores among them at once (dynamic_config_apply.go lists
// what is and is not applied).

// defaultBrokerEntity is Kafka's ConfigEntityName.Default.
const defaultBrokerEntity = "<default>"

// brokerConfigEntity maps a broker resource name to its /config/brokers
// entity: "" is the cluster-wide default, otherwise it must be this broker's
// id (Kafka: "Unexpected broker id, expected N or empty string").
func (b *Broker) brokerConfigEntity(name string) (string, error) {
	if name == "" {
		return defaultBrokerEntity, nil
	}
	if name != strconv.Itoa(int(b.ID())) {
		return "", fmt.Errorf("%w: unexpected broker id, expected %d or empty string, but received %s",
			errInvalidRequest, b.ID(), name)
	}
	return name, nil
}

// incrementalAlterBroker applies one broker resource of an
// IncrementalAlterConfigs request.
func (b *Broker) incrementalAlterBroker(res kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	entity, err := b.brokerConfigEntity(res.ResourceName)
	if err != nil {
		return err
	}
	overrides, err := b.zk.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
	if err != nil {
		return err
	}
	// The stored passwords are merged in clear and encrypted again on
	// write (Kafka's fromPersistentProps, which drops undecodable ones).
	overrides, _ = b.decodePasswords(entity, overrides)
	seen := map[string]bool{}
	for _, c := range res.Configs {
		if seen[c.Name] {
			return fmt.Errorf("%w: config %q named twice", errInvalidRequest, c.Name)
		}
		seen[c.Name] = true
		key, known := brokerKey(c.Name)
		val := ""
		if c.Value != nil {
			val = *c.Value
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			overrides[c.Name] = val
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(overrides, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if !known || key.Type != config.TypeList {
				return fmt.Errorf("%w: %q is not a list config", errInvalidConfig, c.Name)
			}
			cur, ok := overrides[c.Name]
			if !ok {
				cur, _, _ = b.cfg.Value(c.Name)
			}
			overrides[c.Name] = applyListOp(c.Op, cur, val)
		default:
			return fmt.Errorf("%w: unknown operation %d", errInvalidRequest, c.Op)
		}
	}
	return b.storeBrokerOverrides(res.ResourceName, entity, overrides, validateOnly)
}

// alterBroker applies one broker resource of an AlterConfigs request: the
// request's configs replace all of the entity's dynamic overrides.
func (b *Broker) alterBroker(res kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	entity, err := b.brokerConfigEntity(res.ResourceName)
	if err != nil {
		return err
	}
	overrides := map[string]string{}
	for _, c := range res.Configs {
		if c.Value == nil {
			return fmt.Errorf("%w: null value for %q", errInvalidConfig, c.Name)
		}
		overrides[c.Name] = *c.Value
	}
	return b.storeBrokerOverrides(res.ResourceName, entity, overrides, validateOnly)
}

// storeBrokerOverrides validates the complete new overrides of a
// /config/brokers entity (Kafka's DynamicBrokerConfig.validate: only
// dynamic keys, values valid in a full broker config) and, unless
// validateOnly, writes them with a /config/changes notification.
func (b *Broker) storeBrokerOverrides(resName, entity string, overrides map[string]string, validateOnly bool) error {
	var static []string
	for name := range overrides {
		if key, known := brokerKey(name); known && !key.Dynamic {
			static = append(static, name)
		}
	}
	if len(static) > 0 {
		slices.Sort(static)
		return fmt.Errorf("%w: cannot update these configs dynamically: Set(%s)", errInvalidRequest, strings.Join(static, ", "))
	}
	// Kafka validates the values by building a full broker config with them.
	props, err := b.validationProps(entity, overrides)
	if err != nil {
		return err
	}
	if err := validateBrokerProps(props); err != nil {
		return fmt.Errorf("%w: Invalid config value for resource ConfigResource(type=BROKER, name='%s'): %w", errInvalidRequest, resName, err)
	}
	if validateOnly {
		return nil
	}
	stored, err := b.encodePasswords(entity, overrides)
	if err != nil {
		return fmt.Errorf("%w: Invalid config value for resource ConfigResource(type=BROKER, name='%s'): %w", errInvalidRequest, resName, err)
	}
	// SetEntityConfig also writes the /config/changes notification.
	return b.zk.SetEntityConfig(zkutil.ConfigTypeBroker, entity, stored)
}

// validationProps is the full config Kafka's DynamicBrokerConfig.validate
// checks new overrides of entity in: server.properties, then for this
// broker's entity the cluster default's dynamic keys and the new
// overrides, for the cluster default the new overrides and this broker's
// own dynamic keys (which win over them).
func (b *Broker) validationProps(entity string, overrides map[string]string) (map[string]string, error) {
	other := defaultBrokerEntity
	if entity == defaultBrokerEntity {
		other = strconv.Itoa(int(b.ID()))
	}
	stored, err := b.zk.GetEntityConfig(zkutil.ConfigTypeBroker, other)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, err
	}
	maps.DeleteFunc(stored, func(name, _ string) bool { key, known := brokerKey(name); return !known || !key.Dynamic })
	props := b.cfg.Supplied()
	if entity == defaultBrokerEntity {
		maps.Copy(props, overrides)
		maps.Copy(props, stored)
	} else {
		maps.Copy(props, stored)
		maps.Copy(props, overrides)
	}
	return props, nil
}

// validateBrokerProps checks a full broker config with dynamic overrides
// as Kafka builds a KafkaConfig from it: every value, and the listener
// connection limits under their base names (validateConfigTypes).
func validateBrokerProps(props map[string]string) error {
	if _, _, err := config.NewBroker(props); err != nil {
		return err
	}
	return validateListenerLimits(props)
}

// isPasswordConfig is Kafka's DynamicBrokerConfig.isPasswordConfig: a
// PASSWORD key, with or without a listener prefix; a listener's
// <mechanism>.sasl.jaas.config is one too.
func isPasswordConfig(name string) bool {
	if strings.HasSuffix(name, ".sasl.jaas.config") {
		return true
	}
	key, known := brokerKey(name)
	return known && key.Password
}

// passwordEncoder is the encoder of password.encoder.secret (old: of
// password.encoder.old.secret).
func (b *Broker) passwordEncoder(old bool) (*pwencoder.Encoder, error) {
	secret := b.cfg.PasswordEncoderSecret
	if old {
		secret = b.cfg.PasswordEncoderOldSecret
	}
	return pwencoder.New(secret, b.cfg.PasswordEncoderKeyFactoryAlgorithm, b.cfg.PasswordEncoderCipherAlgorithm,
		int(b.cfg.PasswordEncoderKeyLength), int(b.cfg.PasswordEncoderIterations))
}

// encodePasswords returns overrides with every password config encrypted,
// as Kafka's toPersistentProps: refused without a secret ("Password encoder
// secret not configured") and at the cluster-default entity.
func (b *Broker) encodePasswords(entity string, overrides map[string]string) (map[string]string, error) {
	out := maps.Clone(overrides)
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if !isPasswordConfig(name) {
			continue
		}
		if entity == defaultBrokerEntity {
			return nil, errors.New("Password config can be defined only at broker level")
		}
		enc, err := b.passwordEncoder(false)
		if err != nil {
			return nil, err
		}
		if out[name], err = enc.Encode(overrides[name]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodePasswords returns overrides with every password config decrypted,
// with password.encoder.secret or else password.encoder.old.secret; one
// that neither decodes is dropped with an error logged (Kafka: "Dynamic
// password config X could not be decoded, ignoring."). reencode lists the
// names only the old secret decoded.
func (b *Broker) decodePasswords(entity string, overrides map[string]string) (clear map[string]string, reencode []string) {
	clear = maps.Clone(overrides)
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if !isPasswordConfig(name) {
			continue
		}
		var err error
		enc, encErr := b.passwordEncoder(false)
		if err = encErr; err == nil {
			if clear[name], err = enc.Decode(overrides[name]); err == nil {
				continue
			}
		}
		if old, oerr := b.passwordEncoder(true); oerr == nil {
			if v, derr := old.Decode(overrides[name]); derr == nil {
				clear[name] = v
				reencode = append(reencode, name)
				continue
			}
		}
		b.log.WithError(err).WithFields(logrus.Fields{"entity": "brokers/" + entity, "key": name}).
			Error("dynamic password config could not be decoded, ignoring")
		delete(clear, name)
	}
	return clear, reencode
}

func brokerKey(name string) (config.Key, bool) {
	// listener.name.<l>.<key> is the listener's override of <key> (Kafka's
	// ListenerName.configPrefix), dynamic when <key> is.
	if rest, ok := strings.CutPrefix(name, "listener.name."); ok {
		if _, key, ok := strings.Cut(rest, "."); ok {
			name = key
		}
	}
	for _, k := range config.BrokerKeys {
		if k.Name == name {
			return k, true
		}
	}
	return config.Key{}, false
}
