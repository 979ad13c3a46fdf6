package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is the Kafka ConfigDef type of a key; it fixes the Go type of the
// field the key fills.
type Type int

// Key types and the Go field type each one fills (a pointer when the key's
// Kafka default is null and the type is numeric).
const (
	TypeBool   Type = iota + 1 // bool
	TypeShort                  // int16
	TypeInt                    // int32
	TypeLong                   // int64
	TypeDouble                 // float64
	TypeString                 // string ("" stands for Kafka's null)
	TypeList                   // []string, comma separated
)

// String returns the Kafka name of the type, as the documentation prints it.
func (t Type) String() string {
	switch t {
	case TypeBool:
		return "boolean"
	case TypeShort:
		return "short"
	case TypeInt:
		return "int"
	case TypeLong:
		return "long"
	case TypeDouble:
		return "double"
	case TypeString:
		return "string"
	case TypeList:
		return "list"
	}
	return "unknown"
}

// Key describes one configuration key. The tables BrokerKeys and TopicKeys
// are the single source of defaults, validation and docs/configuration.md.
type Key struct {
	// Name is Kafka's name of the key, for example "log.retention.hours".
	Name string
	// Field is the name of the Go field of Broker or Topic that holds it.
	Field string
	// Type is Kafka's type of the key.
	Type Type
	// Default is Kafka 2.8's default in properties syntax. It is ignored
	// when Null is set.
	Default string
	// Null marks a key whose Kafka default is null (unset): numeric fields
	// are then nil pointers and string fields empty.
	Null bool
	// Required marks a key that must be given (zookeeper.connect).
	Required bool
	// Valid restricts the values beyond their type; nil accepts any.
	Valid Validator
	// Dynamic is true when Kafka 2.8 can change the key at run time
	// (kafka-configs.sh --entity-type brokers). Samsa's broker applies the
	// dynamic keys that supply topic defaults at run time and stores the
	// others.
	Dynamic bool
	// Synonym is, for a topic key, the broker key that supplies its default.
	Synonym string
	// Password marks a Kafka PASSWORD key (ssl.keystore.password,
	// sasl.jaas.config): DescribeConfigs reports it sensitive with a null
	// value, as Kafka does.
	Password bool
	// Doc is one line of documentation.
	Doc string
}

// Validator restricts the values a key accepts.
type Validator interface {
	// Check returns nil when the parsed value v is allowed.
	Check(v any) error
	// String describes the allowed values for the documentation.
	String() string
}

// rangeValidator accepts numbers in [min, max]; NaN bounds are open.
type rangeValidator struct{ min, max float64 }

func atLeast(min float64) Validator      { return rangeValidator{min: min, max: math.NaN()} }
func between(min, max float64) Validator { return rangeValidator{min: min, max: max} }

func (r rangeValidator) Check(v any) error {
	var f float64
	switch x := v.(type) {
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		return nil
	}
	if !math.IsNaN(r.min) && f < r.min {
		return fmt.Errorf("value must be at least %s", fmtNum(r.min))
	}
	if !math.IsNaN(r.max) && f > r.max {
		return fmt.Errorf("value must be no more than %s", fmtNum(r.max))
	}
	return nil
}

func (r rangeValidator) String() string {
	switch {
	case math.IsNaN(r.max):
		return "[" + fmtNum(r.min) + ",...]"
	case math.IsNaN(r.min):
		return "[...," + fmtNum(r.max) + "]"
	}
	return "[" + fmtNum(r.min) + ",...," + fmtNum(r.max) + "]"
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// enumValidator accepts one of a fixed set of strings (Kafka's ValidString,
// case-sensitive), or for lists, only members of the set (ValidList).
type enumValidator struct{ allowed []string }

func oneOf(allowed ...string) Validator { return enumValidator{allowed: allowed} }

func (e enumValidator) Check(v any) error {
	switch x := v.(type) {
	case string:
		return e.checkOne(x)
	case []string:
		for _, s := range x {
			if err := e.checkOne(s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e enumValidator) checkOne(s string) error {
	for _, a := range e.allowed {
		if s == a {
			return nil
		}
	}
	return fmt.Errorf("value must be one of %s", strings.Join(e.allowed, ", "))
}

func (e enumValidator) String() string { return strings.Join(e.allowed, ", ") }

// funcValidator is a custom rule with its own description.
type funcValidator struct {
	desc string
	fn   func(v any) error
}

func (f funcValidator) Check(v any) error { return f.fn(v) }
func (f funcValidator) String() string    { return f.desc }

// parseValue parses s as Kafka's ConfigDef.parseType does: surrounding
// whitespace is trimmed, booleans are case-insensitive, lists split on commas
// with blanks around each element removed and an empty string is the empty
// list.
func parseValue(t Type, s string) (any, error) {
	s = strings.TrimSpace(s)
	switch t {
	case TypeBool:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("expected true or false")
	case TypeShort:
		n, err := strconv.ParseInt(s, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("expected a 16-bit integer")
		}
		return int16(n), nil
	case TypeInt:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("expected a 32-bit integer")
		}
		return int32(n), nil
	case TypeLong:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("expected a 64-bit integer")
		}
		return n, nil
	case TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return nil, fmt.Errorf("expected a number")
		}
		return f, nil
	case TypeString:
		return s, nil
	case TypeList:
		if s == "" {
			return []string{}, nil
		}
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts, nil
	}
	return nil, fmt.Errorf("unknown type %d", t)
}

// formatValue renders a parsed value in properties syntax; nil (a null
// default) renders as "".
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []string:
		return strings.Join(x, ",")
	}
	return fmt.Sprint(v)
}

// findKey returns the key named name in keys.
func findKey(keys []Key, name string) (Key, bool) {
	for _, k := range keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// httpListener accepts "http://host:port" (host may be empty or an IP,
// port 0..65535) for metrics.listener.
func httpListener() Validator {
	return funcValidator{desc: "http://host:port", fn: func(v any) error {
		s, _ := v.(string)
		if s == "" {
			return nil
		}
		_, err := ParseHTTPListener(s)
		return err
	}}
}

// ParseHTTPListener checks an "http://host:port" listener (metrics.listener)
// and returns its "host:port" part.
func ParseHTTPListener(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "http://")
	if !ok {
		return "", fmt.Errorf("expected http://host:port")
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 || strings.ContainsAny(rest, "/?#@") {
		return "", fmt.Errorf("expected http://host:port")
	}
	port, err := strconv.Atoi(rest[i+1:])
	if err != nil || port < 0 || port > 65535 {
		return "", fmt.Errorf("expected a port in 0..65535")
	}
	return rest, nil
}
