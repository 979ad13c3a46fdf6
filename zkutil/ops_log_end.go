package zkutil

// GetLogEndEntries reads topic's log-end reassignment entries
// (codec_log_end.go); a missing znode yields none.
func (c *Client) GetLogEndEntries(topic string) ([]LogEndEntry, error) {
	cfg, err := c.GetEntityConfig(ConfigTypeLogEndReplicas, topic)
	if err != nil {
		return nil, err
	}
	return DecodeLogEndEntries(cfg[LogEndReplicasKey]), nil
}

// SetLogEndEntries replaces topic's log-end reassignment entries and
// announces the change under /config/changes, as SetEntityConfig does.
func (c *Client) SetLogEndEntries(topic string, entries []LogEndEntry) error {
	return c.SetEntityConfig(ConfigTypeLogEndReplicas, topic, map[string]string{LogEndReplicasKey: EncodeLogEndEntries(entries)})
}
