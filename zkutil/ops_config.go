package zkutil

import (
	"errors"
)

// GetEntityConfig reads /config/<type>/<name>. A missing znode yields an
// empty map (no overrides), as in Kafka's fetchEntityConfig.
func (c *Client) GetEntityConfig(entityType, name string) (map[string]string, error) {
	data, _, err := c.Get(EntityConfigPath(entityType, name))
	if errors.Is(err, ErrNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return DecodeEntityConfig(data)
}

// GetAllEntityConfigs reads the configs of every entity of a type (e.g. all
// topic overrides), keyed by entity name.
func (c *Client) GetAllEntityConfigs(entityType string) (map[string]map[string]string, error) {
	names, err := c.Children(EntityTypeConfigPath(entityType))
	if errors.Is(err, ErrNoNode) {
		return map[string]map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	cfgs := make([]map[string]string, len(names))
	errs := make([]error, len(names))
	parallel(len(names), func(i int) { cfgs[i], errs[i] = c.GetEntityConfig(entityType, names[i]) })
	out := make(map[string]map[string]string, len(names))
	for i, n := range names {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[n] = cfgs[i]
	}
	return out, nil
}

// SetEntityConfig replaces /config/<type>/<name> with cfg (overrides only;
// last writer wins) and then announces the change with a v2
// /config/changes/config_change_<seq> notification, as Kafka's
// AdminZkClient.changeEntityConfig does. The pair is not atomic, as in Kafka.
func (c *Client) SetEntityConfig(entityType, name string, cfg map[string]string) error {
	if err := c.setOrCreate(EntityConfigPath(entityType, name), EncodeEntityConfig(cfg)); err != nil {
		return err
	}
	return c.WriteConfigChange(entityType + "/" + name)
}

// WriteConfigChange creates a config_change_ notification for entityPath
// ("topics/foo", "users/alice/clients/app").
func (c *Client) WriteConfigChange(entityPath string) error {
	_, err := c.createSequential(ConfigChangesPath(), ConfigChangeSeqPrefix, EncodeConfigChange(entityPath))
	return err
}

// GetConfigChanges returns the config_change_ child names in sequence order.
func (c *Client) GetConfigChanges() ([]string, error) {
	return c.sortedChildren(ConfigChangesPath(), ConfigChangeSeqPrefix)
}

// ReadConfigChange reads one notification: the entity path it names and its
// creation time (ms), which listeners use to purge notifications older than
// 15 minutes. Errors: ErrNoNode, ErrMalformed.
func (c *Client) ReadConfigChange(node string) (entityPath string, ctimeMs int64, err error) {
	data, st, err := c.Get(ConfigChangesPath() + "/" + node)
	if err != nil {
		return "", 0, err
	}
	entityPath, err = DecodeConfigChange(data)
	return entityPath, st.Ctime, err
}

// DeleteConfigChange deletes one notification; a missing one is fine.
func (c *Client) DeleteConfigChange(node string) error {
	err := c.Delete(ConfigChangesPath()+"/"+node, AnyVersion)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	return err
}

// GetEntityNames returns the entity names under /config/<type>, sorted.
func (c *Client) GetEntityNames(entityType string) ([]string, error) {
	return c.sortedChildren(EntityTypeConfigPath(entityType), "")
}
