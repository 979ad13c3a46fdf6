package broker

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"samsa/zkutil"
)

// Client quota entities in ZooKeeper (Kafka 2.8 ZK mode,
// ConfigEntityName/Sanitizer): /config/users/<user>, /config/clients/<id>
// and /config/users/<user>/clients/<id>, names URL-encoded, "<default>"
// for the default entity. Quotas are stored and described; Samsa does not
// enforce them yet.

const (
	quotaEntityUser   = "user"
	quotaEntityClient = "client-id"
	quotaDefault      = "<default>"
)

// quotaKeys are the client quota keys Kafka 2.8 accepts (QuotaConfigs).
var quotaKeys = map[string]bool{
	"producer_byte_rate": true, "consumer_byte_rate": true,
	"request_percentage": true, "controller_mutation_rate": true,
}

// quotaEntity is a user and/or client-id entity; nil name = the default.
type quotaEntity struct {
	hasUser, hasClient bool
	user, client       *string
}

// sanitize is Kafka's Sanitizer.sanitize (java.net.URLEncoder plus "*").
func sanitize(name string) string {
	s := url.QueryEscape(name)
	s = strings.ReplaceAll(s, "+", "%20")
	s = strings.ReplaceAll(s, "*", "%2A")
	return strings.ReplaceAll(s, "~", "%7E")
}

func desanitize(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

func zkName(n *string) string {
	if n == nil {
		return quotaDefault
	}
	return sanitize(*n)
}

func fromZKName(s string) *string {
	if s == quotaDefault {
		return nil
	}
	d := desanitize(s)
	return &d
}

// path returns the /config entity type and name of e.
func (e quotaEntity) path() (entityType, name string) {
	switch {
	case e.hasUser && e.hasClient:
		return zkutil.ConfigTypeUser + "/" + zkName(e.user) + "/" + zkutil.ConfigTypeClient, zkName(e.client)
	case e.hasUser:
		return zkutil.ConfigTypeUser, zkName(e.user)
	default:
		return zkutil.ConfigTypeClient, zkName(e.client)
	}
}

// parseQuotaEntity validates an entity given as (type, name) pairs.
func parseQuotaEntity(parts [][2]*string) (quotaEntity, error) {
	var e quotaEntity
	for _, p := range parts {
		typ := ""
		if p[0] != nil {
			typ = *p[0]
		}
		switch typ {
		case quotaEntityUser:
			if e.hasUser {
				return e, fmt.Errorf("%w: duplicate user entity", errInvalidRequest)
			}
			e.hasUser, e.user = true, p[1]
		case quotaEntityClient:
			if e.hasClient {
				return e, fmt.Errorf("%w: duplicate client-id entity", errInvalidRequest)
			}
			e.hasClient, e.client = true, p[1]
		default:
			return e, fmt.Errorf("%w: unsupported quota entity type %q", errInvalidRequest, typ)
		}
	}
	if !e.hasUser && !e.hasClient {
		return e, fmt.Errorf("%w: empty quota entity", errInvalidRequest)
	}
	return e, nil
}

// quotaValues reads an entity's quotas.
func (b *Broker) quotaValues(e quotaEntity) (map[string]float64, error) {
	typ, name := e.path()
	cfg, err := b.zk.GetEntityConfig(typ, name)
	if errors.Is(err, zkutil.ErrNoNode) {
		return map[string]float64{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, v := range cfg {
		if !quotaKeys[k] {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out, nil
}

// allQuotaEntities lists every stored user, client-id and user/client-id
// entity.
func (b *Broker) allQuotaEntities() ([]quotaEntity, error) {
	var out []quotaEntity
	users, err := b.zk.GetEntityNames(zkutil.ConfigTypeUser)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out = append(out, quotaEntity{hasUser: true, user: fromZKName(u)})
		clients, err := b.zk.GetEntityNames(zkutil.ConfigTypeUser + "/" + u + "/" + zkutil.ConfigTypeClient)
		if err != nil {
			return nil, err
		}
		for _, c := range clients {
			out = append(out, quotaEntity{hasUser: true, user: fromZKName(u), hasClient: true, client: fromZKName(c)})
		}
	}
	clients, err := b.zk.GetEntityNames(zkutil.ConfigTypeClient)
	if err != nil {
		return nil, err
	}
	for _, c := range clients {
		out = append(out, quotaEntity{hasClient: true, client: fromZKName(c)})
	}
	return out, nil
}

// setQuotas writes an entity's quotas and announces the change. The
// entity's other keys (a user's SCRAM credentials) are kept, as Kafka's
// ZkAdminManager.alterClientQuotas changes only the quota properties.
func (b *Broker) setQuotas(e quotaEntity, values map[string]float64) error {
	typ, name := e.path()
	cfg, err := b.zk.GetEntityConfig(typ, name)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	for k := range cfg {
		if quotaKeys[k] {
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
	return b.zk.SetEntityConfig(typ, name, cfg)
}
