package zkutil

import "strings"

// DefaultEntityName is the znode name of a default config entity (Kafka's
// ConfigEntityName.Default): /config/users/<default>, /config/clients/<default>.
const DefaultEntityName = "<default>"

// QuotaEntity is a client quota entity as Kafka 2.8 stores it under /config: a user, a
// client id, or a user and a client id (/config/users/<user>/clients/<client-id>). A nil
// name is the default entity; names are raw here and sanitized in the znode path.
type QuotaEntity struct {
	HasUser, HasClient bool
	User, Client       *string
}

// quotaZKName is the znode name of an entity part.
func quotaZKName(n *string) string {
	if n == nil {
		return DefaultEntityName
	}
	return Sanitize(*n)
}

// quotaFromZKName is the entity part named by a znode.
func quotaFromZKName(s string) *string {
	if s == DefaultEntityName {
		return nil
	}
	d := Desanitize(s)
	return &d
}

// ConfigEntity returns the /config entity type and name of e, as GetEntityConfig and
// SetEntityConfig take them: ("users", u), ("clients", c) or ("users/<u>/clients", c).
func (e QuotaEntity) ConfigEntity() (entityType, name string) {
	switch {
	case e.HasUser && e.HasClient:
		return ConfigTypeUser + "/" + quotaZKName(e.User) + "/" + ConfigTypeClient, quotaZKName(e.Client)
	case e.HasUser:
		return ConfigTypeUser, quotaZKName(e.User)
	default:
		return ConfigTypeClient, quotaZKName(e.Client)
	}
}

// ParseQuotaEntityPath parses a config change notification's entity_path: clients/<c>,
// users/<u> or users/<u>/clients/<c> (znode names); ok is false for anything else.
func ParseQuotaEntityPath(path string) (e QuotaEntity, ok bool) {
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 2 && parts[0] == ConfigTypeClient && parts[1] != "":
		return QuotaEntity{HasClient: true, Client: quotaFromZKName(parts[1])}, true
	case len(parts) == 2 && parts[0] == ConfigTypeUser && parts[1] != "":
		return QuotaEntity{HasUser: true, User: quotaFromZKName(parts[1])}, true
	case len(parts) == 4 && parts[0] == ConfigTypeUser && parts[2] == ConfigTypeClient &&
		parts[1] != "" && parts[3] != "":
		return QuotaEntity{HasUser: true, User: quotaFromZKName(parts[1]), HasClient: true,
			Client: quotaFromZKName(parts[3])}, true
	}
	return QuotaEntity{}, false
}

// QuotaEntities lists every stored user, user/client-id and client-id entity (the znodes
// under /config/users, /config/users/<u>/clients and /config/clients), whatever keys they
// hold.
func (c *Client) QuotaEntities() ([]QuotaEntity, error) {
	var out []QuotaEntity
	users, err := c.GetEntityNames(ConfigTypeUser)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out = append(out, QuotaEntity{HasUser: true, User: quotaFromZKName(u)})
		clients, err := c.GetEntityNames(ConfigTypeUser + "/" + u + "/" + ConfigTypeClient)
		if err != nil {
			return nil, err
		}
		for _, cl := range clients {
			out = append(out, QuotaEntity{HasUser: true, User: quotaFromZKName(u), HasClient: true,
				Client: quotaFromZKName(cl)})
		}
	}
	clients, err := c.GetEntityNames(ConfigTypeClient)
	if err != nil {
		return nil, err
	}
	for _, cl := range clients {
		out = append(out, QuotaEntity{HasClient: true, Client: quotaFromZKName(cl)})
	}
	return out, nil
}
