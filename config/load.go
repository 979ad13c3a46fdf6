package config

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Warning is a non-fatal problem found while building a configuration, such
// as an unknown key. config never logs; the caller logs warnings (Kafka logs
// them at WARN).
type Warning string

// KeyError reports one key whose value is missing, unparsable or out of range.
type KeyError struct {
	Key    string // Kafka name of the key
	Value  string // the value as supplied
	Reason string // what is wrong, for example "value must be at least 1"
}

// Error follows Kafka's ConfigException wording.
func (e *KeyError) Error() string {
	return fmt.Sprintf("config: invalid value %q for configuration %s: %s", e.Value, e.Key, e.Reason)
}

// ErrMissingRequired is wrapped by the error for a required key (only
// zookeeper.connect) that was not supplied.
var ErrMissingRequired = errors.New("config: missing required configuration")

// NewBroker builds a Broker from props (a parsed server.properties with any
// overrides already merged, see Merge). Keys that are not given take Kafka
// 2.8's defaults. Unknown keys produce warnings. Every problem (bad values,
// missing required keys, inconsistent combinations) is reported in one error
// made with errors.Join; each bad value is a *KeyError. props is not retained.
func NewBroker(props map[string]string) (*Broker, []Warning, error) {
	b := &Broker{supplied: make(map[string]string, len(props))}
	for k, v := range props {
		b.supplied[k] = v
	}
	errs := fill(reflect.ValueOf(b).Elem(), BrokerKeys, props, true)
	var warnings []Warning
	for _, k := range sortedKeys(props) {
		if _, ok := findKey(BrokerKeys, k); !ok && !isListenerKey(k) {
			warnings = append(warnings, Warning(fmt.Sprintf("The configuration '%s' was supplied but isn't a known config.", k)))
		}
	}
	errs = append(errs, b.validate()...)
	if len(errs) > 0 {
		return nil, warnings, errors.Join(errs...)
	}
	return b, warnings, nil
}

// LoadBroker reads the properties file at path, applies overrides
// ("key=value" strings as given to --override) and builds a Broker with
// NewBroker.
func LoadBroker(path string, overrides []string) (*Broker, []Warning, error) {
	props, err := ReadPropertiesFile(path)
	if err != nil {
		return nil, nil, err
	}
	ov, err := ParseOverrides(overrides)
	if err != nil {
		return nil, nil, err
	}
	return NewBroker(Merge(props, ov))
}

// Defaults returns a Broker holding Kafka 2.8's default for every key and
// no zookeeper.connect. It is meant for tests and documentation; a broker
// must be built with NewBroker.
func Defaults() *Broker {
	b := &Broker{supplied: map[string]string{}}
	if errs := fill(reflect.ValueOf(b).Elem(), BrokerKeys, nil, false); len(errs) > 0 {
		panic(fmt.Sprintf("config: invariant broken: a default in BrokerKeys does not parse: %v", errors.Join(errs...)))
	}
	return b
}

// Supplied returns a copy of the key=value pairs the Broker was built from,
// unknown keys included.
func (b *Broker) Supplied() map[string]string {
	out := make(map[string]string, len(b.supplied))
	for k, v := range b.supplied {
		out[k] = v
	}
	return out
}

// Value returns the value of the broker key name in properties syntax ("" for
// an unset null key) and whether it was supplied rather than defaulted. ok is
// false when name is not a broker key.
func (b *Broker) Value(name string) (value string, supplied bool, ok bool) {
	k, found := findKey(BrokerKeys, name)
	if !found {
		return "", false, false
	}
	fv := reflect.ValueOf(b).Elem().FieldByName(k.Field)
	_, supplied = b.supplied[name]
	return formatValue(fieldValue(fv)), supplied, true
}

// fill sets each key's field in dst from props or from the key's default,
// collecting every problem. With checkRequired, a required key that is
// missing is an error.
func fill(dst reflect.Value, keys []Key, props map[string]string, checkRequired bool) []error {
	var errs []error
	for _, k := range keys {
		raw, given := props[k.Name]
		if !given {
			if k.Required && checkRequired {
				errs = append(errs, fmt.Errorf("%w %s which has no default value", ErrMissingRequired, k.Name))
				continue
			}
			if k.Null {
				continue
			}
			raw = k.Default
		}
		v, err := parseValue(k.Type, raw)
		if err == nil && k.Valid != nil {
			err = k.Valid.Check(v)
		}
		if err != nil {
			errs = append(errs, &KeyError{Key: k.Name, Value: raw, Reason: err.Error()})
			// Keep the default, so that checks across keys still see a
			// sensible value and report their own problems.
			if dv, derr := parseValue(k.Type, k.Default); derr == nil && !k.Null {
				setField(dst.FieldByName(k.Field), dv)
			}
			continue
		}
		if k.Required && checkRequired && formatValue(v) == "" {
			errs = append(errs, fmt.Errorf("%w %s which has no default value", ErrMissingRequired, k.Name))
			continue
		}
		setField(dst.FieldByName(k.Field), v)
	}
	return errs
}

// setField stores v in f, allocating when f is a pointer (a nullable key).
func setField(f reflect.Value, v any) {
	rv := reflect.ValueOf(v)
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		p.Elem().Set(rv)
		f.Set(p)
		return
	}
	f.Set(rv)
}

// fieldValue returns the value held by f, nil for an unset pointer.
func fieldValue(f reflect.Value) any {
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return nil
		}
		return f.Elem().Interface()
	}
	return f.Interface()
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isListenerKey reports whether k is a listener-prefixed form Kafka accepts,
// listener.name.<l>.<key> of a broker key, or the per-mechanism SASL keys
// listener.name.<l>.<mech>.sasl.jaas.config and ...connections.max.reauth.ms.
func isListenerKey(k string) bool {
	rest, ok := strings.CutPrefix(k, "listener.name.")
	if !ok {
		return false
	}
	_, rest, ok = strings.Cut(rest, ".")
	if !ok {
		return false
	}
	if _, known := findKey(BrokerKeys, rest); known {
		return true
	}
	_, perMech, ok := strings.Cut(rest, ".")
	return ok && (perMech == "sasl.jaas.config" || perMech == "connections.max.reauth.ms")
}
