package broker

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"

	"samsa/zkutil"
)

// Per-address connection creation rate quotas (KIP-612, Kafka 2.8's
// ConnectionQuotas IP quotas): connection_creation_rate on
// /config/ips/<ip> and /config/ips/<default>, written by AlterClientQuotas
// with an "ip" entity (49_alter_client_quotas.go) or kafka-configs
// --entity-type ips, described by DescribeClientQuotas
// (48_describe_client_quotas.go) and enforced by the server
// (server.SetIPConnectionRates: over the quota a new connection is closed
// after the throttle time; a quota of 0 admits none). The broker reads every ip entity at start and
// again on each /config/changes notification of one.

// entityIP is Kafka's ClientQuotaEntity.IP.
const entityIP = "ip"

// ipConnectionRateKey is Kafka's QuotaConfigs.IP_CONNECTION_RATE_OVERRIDE_CONFIG.
const ipConnectionRateKey = "connection_creation_rate"

// quotaOp is one AlterClientQuotas operation.
type quotaOp struct {
	key    string
	value  float64
	remove bool
}

// ipQuotaEntity validates an ip entity's name as Kafka does (nil is the
// default entity; otherwise an IP address or a host that resolves) and
// returns its /config/ips entity name.
func ipQuotaEntity(name *string) (string, error) {
	if name == nil {
		return defaultBrokerEntity, nil
	}
	if *name == "" {
		return "", fmt.Errorf("%w: Empty ip not supported", errInvalidRequest)
	}
	if net.ParseIP(*name) == nil {
		if _, err := net.LookupHost(*name); err != nil {
			return "", fmt.Errorf("%w: %s is not a valid IP or resolvable host.", errInvalidRequest, *name)
		}
	}
	return *name, nil
}

// alterIPQuota applies AlterClientQuotas operations to an ip entity.
func (b *Broker) alterIPQuota(name *string, ops []quotaOp, validateOnly bool) error {
	entity, err := ipQuotaEntity(name)
	if err != nil {
		return err
	}
	cfg, err := b.zk.GetEntityConfig(zkutil.ConfigTypeIP, entity)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	for _, op := range ops {
		switch {
		case op.key != ipConnectionRateKey:
			return fmt.Errorf("%w: Invalid configuration key %s", errInvalidRequest, op.key)
		case op.remove:
			delete(cfg, op.key)
		case op.value < 0:
			return fmt.Errorf("%w: Invalid value %v for configuration %s: Value must be at least 0", errInvalidRequest, op.value, op.key)
		case math.Abs(math.Round(op.value)-op.value) > 1e-6 || op.value > math.MaxInt32:
			return fmt.Errorf("%w: Configuration %s must be a INT value", errInvalidRequest, op.key) // Kafka's wording
		default:
			cfg[op.key] = strconv.FormatInt(int64(math.Round(op.value)), 10)
		}
	}
	if validateOnly {
		return nil
	}
	return b.zk.SetEntityConfig(zkutil.ConfigTypeIP, entity, cfg)
}

// ipQuotas returns the connection_creation_rate of every ip entity that
// has one, by entity name ("<default>" for the default).
func (b *Broker) ipQuotas() (map[string]float64, error) {
	all, err := b.zk.GetAllEntityConfigs(zkutil.ConfigTypeIP)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, cfg := range all {
		if v, ok := cfg[ipConnectionRateKey]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
				out[name] = f
			}
		}
	}
	return out, nil
}

// loadIPQuotas gives the server the ip quotas stored in ZooKeeper, host
// names resolved to their addresses (Kafka's InetAddress.getByName); one
// that does not resolve is skipped with a warning.
func (b *Broker) loadIPQuotas() error {
	quotas, err := b.ipQuotas()
	if err != nil || b.srv == nil {
		return err
	}
	def, byIP := int32(-1), map[string]int32{} // -1: no quota
	for name, rate := range quotas {
		r := int32(min(rate, math.MaxInt32))
		if name == defaultBrokerEntity {
			def = r
			continue
		}
		addrs := []string{name}
		if net.ParseIP(name) == nil {
			if addrs, err = net.LookupHost(name); err != nil {
				b.log.WithError(err).WithField("ip", name).Warn("ignoring the connection_creation_rate of a host that does not resolve")
				continue
			}
		}
		for _, a := range addrs {
			byIP[a] = r
		}
	}
	b.srv.SetIPConnectionRates(def, byIP)
	b.log.WithField("default", def).WithField("addresses", len(byIP)).Info("loaded ip connection_creation_rate quotas")
	return nil
}
