package zkutil

import (
	"encoding/json"
	"fmt"
	"strings"
)

type entityConfigJSON struct {
	Version *int              `json:"version"`
	Config  map[string]string `json:"config"`
}

// EncodeEntityConfig returns {"version":1,"config":{...}} for
// /config/<type>/<name>. Values are strings, as in Kafka; nil encodes as {}.
func EncodeEntityConfig(cfg map[string]string) []byte {
	version := 1
	if cfg == nil {
		cfg = map[string]string{}
	}
	return marshal(entityConfigJSON{Version: &version, Config: cfg})
}

// DecodeEntityConfig parses /config/<type>/<name> data. The map is never nil.
func DecodeEntityConfig(data []byte) (map[string]string, error) {
	var j entityConfigJSON
	if err := unmarshal("entity config", data, &j); err != nil {
		return nil, err
	}
	if j.Config == nil {
		j.Config = map[string]string{}
	}
	return j.Config, nil
}

type configChangeJSON struct {
	Version    *int    `json:"version"`
	EntityPath *string `json:"entity_path,omitempty"`
	EntityType *string `json:"entity_type,omitempty"`
	EntityName *string `json:"entity_name,omitempty"`
}

// EncodeConfigChange returns the v2 notification {"version":2,"entity_path":"topics/foo"}.
// entityPath is "<type>/<name>" (hierarchical for users/<u>/clients/<c>).
func EncodeConfigChange(entityPath string) []byte {
	version := 2
	return marshal(configChangeJSON{Version: &version, EntityPath: &entityPath})
}

// DecodeConfigChange parses a config_change_ notification and returns its
// entity path ("topics/foo"). It reads v2, v1 ({"entity_type","entity_name"})
// and the 0.8 form (a JSON string naming a topic).
func DecodeConfigChange(data []byte) (string, error) {
	const kind = "config change"
	var topic string
	if err := json.Unmarshal(data, &topic); err == nil && len(data) <= maxZNodeBytes {
		if topic == "" {
			return "", malformed(kind, fmt.Errorf("empty topic"))
		}
		return ConfigTypeTopic + "/" + topic, nil
	}
	var j configChangeJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return "", err
	}
	switch {
	case j.EntityPath != nil && strings.Contains(*j.EntityPath, "/"):
		return *j.EntityPath, nil
	case j.EntityType != nil && j.EntityName != nil:
		return *j.EntityType + "/" + *j.EntityName, nil
	}
	return "", malformed(kind, fmt.Errorf("no entity_path or entity_type/entity_name"))
}
