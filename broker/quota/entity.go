package quota

import "math"

// Unlimited is the bound of a client no entity matches (Kafka's Long.MaxValue quota).
const Unlimited = float64(math.MaxInt64)

// Entity is a client quota entity as configured under /config: a user part, a client-id
// part or both, each a name or the default (<default>). User names are sanitized (as in
// ZooKeeper and in Kafka's metric tags); client ids are raw.
type Entity struct {
	User, Client               string
	HasUser, HasClient         bool
	DefaultUser, DefaultClient bool
}

// UserEntity is /config/users/<user>.
func UserEntity(user string) Entity { return Entity{User: user, HasUser: true} }

// ClientEntity is /config/clients/<client-id>.
func ClientEntity(client string) Entity { return Entity{Client: client, HasClient: true} }

// UserClientEntity is /config/users/<user>/clients/<client-id>.
func UserClientEntity(user, client string) Entity {
	return Entity{User: user, Client: client, HasUser: true, HasClient: true}
}

// The default entities.
var (
	DefaultUserEntity        = Entity{HasUser: true, DefaultUser: true}                                       // /config/users/<default>
	DefaultClientEntity      = Entity{HasClient: true, DefaultClient: true}                                   // /config/clients/<default>
	DefaultUserDefaultClient = Entity{HasUser: true, DefaultUser: true, HasClient: true, DefaultClient: true} // /config/users/<default>/clients/<default>
)

// UserDefaultClientEntity is /config/users/<user>/clients/<default>.
func UserDefaultClientEntity(user string) Entity {
	return Entity{User: user, HasUser: true, HasClient: true, DefaultClient: true}
}

// DefaultUserClientEntity is /config/users/<default>/clients/<client-id>.
func DefaultUserClientEntity(client string) Entity {
	return Entity{Client: client, HasUser: true, DefaultUser: true, HasClient: true}
}

// Table maps configured entities to their bound (bytes per second) for one quota kind. A
// Table handed to SetQuotas must not be modified afterwards.
type Table map[Entity]float64

// Tags name the sensor a request is recorded in (Kafka's quota metric tags): the user and
// client-id of the matching entity's level, "" for a level the entity does not have. Every
// request with the same tags shares one rate.
type Tags struct{ User, Client string }

// Resolve returns the tags and bound of a connection's (sanitized user, client id) in t:
// the most specific entity in Kafka's order of precedence (ClientQuotaManager):
//
//  1. /config/users/<user>/clients/<client-id>
//  2. /config/users/<user>/clients/<default>
//  3. /config/users/<user>
//  4. /config/users/<default>/clients/<client-id>
//  5. /config/users/<default>/clients/<default>
//  6. /config/users/<default>
//  7. /config/clients/<client-id>
//  8. /config/clients/<default>
//
// A (user, client-id) level shares one rate per (user, client-id), a user level one per
// user, a client-id level one per client id, also when the matching entity is a default. No
// match is Unlimited with client-id tags.
func Resolve(t Table, user, client string) (Tags, float64) {
	return resolve(t, Unlimited, user, client)
}

// resolve is Resolve with a static client-id quota below the eight levels
// (Kafka's quota.producer.default / quota.consumer.default).
func resolve(t Table, static float64, user, client string) (Tags, float64) {
	if len(t) == 0 {
		return Tags{Client: client}, static
	}
	both, userOnly, clientOnly := Tags{user, client}, Tags{User: user}, Tags{Client: client}
	if q, ok := t[UserClientEntity(user, client)]; ok {
		return both, q
	}
	if q, ok := t[UserDefaultClientEntity(user)]; ok {
		return both, q
	}
	if q, ok := t[UserEntity(user)]; ok {
		return userOnly, q
	}
	if q, ok := t[DefaultUserClientEntity(client)]; ok {
		return both, q
	}
	if q, ok := t[DefaultUserDefaultClient]; ok {
		return both, q
	}
	if q, ok := t[DefaultUserEntity]; ok {
		return userOnly, q
	}
	if q, ok := t[ClientEntity(client)]; ok {
		return clientOnly, q
	}
	if q, ok := t[DefaultClientEntity]; ok {
		return clientOnly, q
	}
	return clientOnly, static
}
