package zkstore

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"samsa/broker/quota"
	"samsa/zkutil"
)

// Entity component types of the client quota APIs (DescribeClientQuotas,
// AlterClientQuotas).
const (
	EntityUser   = "user"
	EntityClient = "client-id"
)

// Keys are the client quota keys Kafka 2.8 accepts (QuotaConfigs), each
// enforced as the Kind of the same index in kindKeys.
var Keys = map[string]bool{
	KeyProducerByteRate: true, KeyConsumerByteRate: true,
	KeyRequestPercentage: true, KeyControllerMutationRate: true,
}

// The client quota keys.
const (
	KeyProducerByteRate       = "producer_byte_rate"
	KeyConsumerByteRate       = "consumer_byte_rate"
	KeyRequestPercentage      = "request_percentage"
	KeyControllerMutationRate = "controller_mutation_rate"
)

// kindKeys pairs each quota kind with its config key.
var kindKeys = [...]struct {
	kind quota.Kind
	key  string
}{
	{quota.Produce, KeyProducerByteRate}, {quota.Fetch, KeyConsumerByteRate},
	{quota.Request, KeyRequestPercentage}, {quota.ControllerMutation, KeyControllerMutationRate},
}

// ErrInvalidEntity is an entity the client quota APIs refuse (Kafka's
// InvalidRequestException); the broker answers INVALID_REQUEST.
var ErrInvalidEntity = errors.New("invalid client quota entity")

// ParseEntity validates an entity given as (type, name) pairs, a nil name
// being the default.
func ParseEntity(parts [][2]*string) (zkutil.QuotaEntity, error) {
	var e zkutil.QuotaEntity
	for _, p := range parts {
		typ := ""
		if p[0] != nil {
			typ = *p[0]
		}
		switch typ {
		case EntityUser:
			if e.HasUser {
				return e, fmt.Errorf("%w: duplicate user entity", ErrInvalidEntity)
			}
			e.HasUser, e.User = true, p[1]
		case EntityClient:
			if e.HasClient {
				return e, fmt.Errorf("%w: duplicate client-id entity", ErrInvalidEntity)
			}
			e.HasClient, e.Client = true, p[1]
		default:
			return e, fmt.Errorf("%w: unsupported quota entity type %q", ErrInvalidEntity, typ)
		}
	}
	if !e.HasUser && !e.HasClient {
		return e, fmt.Errorf("%w: empty quota entity", ErrInvalidEntity)
	}
	return e, nil
}

// Values reads an entity's quotas (an entity without a znode has none).
func Values(zk *zkutil.Client, e zkutil.QuotaEntity) (map[string]float64, error) {
	typ, name := e.ConfigEntity()
	cfg, err := zk.GetEntityConfig(typ, name)
	if errors.Is(err, zkutil.ErrNoNode) {
		return map[string]float64{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, v := range cfg {
		if !Keys[k] {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out, nil
}

// Set writes an entity's quotas and announces the change. The entity's
// other keys (a user's SCRAM credentials) are kept, as Kafka's
// ZkAdminManager.alterClientQuotas changes only the quota properties.
func Set(zk *zkutil.Client, e zkutil.QuotaEntity, values map[string]float64) error {
	typ, name := e.ConfigEntity()
	cfg, err := zk.GetEntityConfig(typ, name)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	for k := range cfg {
		if Keys[k] {
			delete(cfg, k)
		}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cfg[k] = strconv.FormatFloat(values[k], 'f', -1, 64)
	}
	// SetEntityConfig writes the config_change_ notification itself: one
	// change, one notification, as Kafka writes it.
	return zk.SetEntityConfig(typ, name, cfg)
}

// ToQuota converts a ZooKeeper quota entity (names raw, nil the default)
// to the quota package's (user sanitized, client raw).
func ToQuota(e zkutil.QuotaEntity) quota.Entity {
	q := quota.Entity{HasUser: e.HasUser, HasClient: e.HasClient}
	if e.HasUser {
		if e.User == nil {
			q.DefaultUser = true
		} else {
			q.User = zkutil.Sanitize(*e.User)
		}
	}
	if e.HasClient {
		if e.Client == nil {
			q.DefaultClient = true
		} else {
			q.Client = *e.Client
		}
	}
	return q
}

// Load reads every user and client-id entity and replaces the quotas m
// enforces with theirs (Kafka's DynamicConfigManager start). It returns
// the number of entities read.
func Load(zk *zkutil.Client, m *quota.Manager) (int, error) {
	entities, err := zk.QuotaEntities()
	if err != nil {
		return 0, err
	}
	tables := [len(kindKeys)]quota.Table{}
	for i := range tables {
		tables[i] = quota.Table{}
	}
	for _, e := range entities {
		values, err := Values(zk, e)
		if err != nil {
			return 0, err
		}
		for i, kk := range kindKeys {
			if v, ok := values[kk.key]; ok {
				tables[i][ToQuota(e)] = v
			}
		}
	}
	for i, kk := range kindKeys {
		m.SetQuotas(kk.kind, tables[i])
	}
	return len(entities), nil
}

// ApplyChange re-reads the entity a config change names (its entity_path:
// clients/<c>, users/<u>, users/<u>/clients/<c>) and updates the quotas m
// enforces, of every kind (Kafka's QuotaConfigHandler: a key absent from
// the entity's config removes that quota). ok is false for a path that
// names no quota entity (nothing to do).
func ApplyChange(zk *zkutil.Client, m *quota.Manager, entityPath string) (ok bool, err error) {
	e, ok := zkutil.ParseQuotaEntityPath(entityPath)
	if !ok {
		return false, nil
	}
	values, err := Values(zk, e)
	if err != nil {
		return true, err
	}
	qe := ToQuota(e)
	for _, kk := range kindKeys {
		old := m.Quotas(kk.kind)
		v, set := values[kk.key]
		if cur, had := old[qe]; had == set && cur == v {
			continue
		}
		t := make(quota.Table, len(old)+1)
		for k, q := range old {
			t[k] = q
		}
		if set {
			t[qe] = v
		} else {
			delete(t, qe)
		}
		m.SetQuotas(kk.kind, t)
	}
	return true, nil
}
