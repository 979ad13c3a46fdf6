package broker

// DescribeConfigs: v0-4
//
// Behaviour:
//   - Topics: every topic key with its effective value; source
//     DYNAMIC_TOPIC_CONFIG for overrides in /config/topics/<t>,
//     STATIC_BROKER_CONFIG when the broker's synonym key is set in
//     server.properties, DEFAULT_CONFIG otherwise. Unknown topics answer
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - Brokers: every broker key of this broker (resource name = its id),
//     STATIC_BROKER_CONFIG when set in server.properties; keys that are not
//     dynamic are read-only; a key without default that is unset has a
//     null value (log.retention.ms). Synonyms end with DEFAULT_CONFIG when
//     Kafka has a default. Another broker's id answers INVALID_REQUEST (ask
//     that broker). Dynamic overrides in /config/brokers/<id> and
//     /config/brokers/<default> are shown with sources DYNAMIC_BROKER_CONFIG
//     and DYNAMIC_DEFAULT_BROKER_CONFIG. The empty name (the cluster-wide
//     default entity) lists only the dynamic defaults, as Kafka 2.8.
//     Listener overrides (listener.name.<l>.<key>) set statically or
//     dynamically follow under their full names, with the synonyms of
//     their base key after their own (configs_listener.go).
//     Password keys (ssl.keystore.password, password.encoder.secret, ...)
//     are answered sensitive with null values and synonym values.
//   - Broker loggers (KIP-412, resource name = this broker's id): log4j's
//     "root" logger and its level (broker_logger.go).
//   - config_names filters the keys (null or empty: all); synonyms (v1+) and documentation
//     (v3+) are sent when asked for. Other resource types answer
//     INVALID_REQUEST.
//   - Authorization: DescribeConfigs on the cluster for BROKER and
//     BROKER_LOGGER resources (CLUSTER_AUTHORIZATION_FAILED), on the topic for
//     TOPIC (TOPIC_AUTHORIZATION_FAILED, before the existence check), per
//     resource, as Kafka 2.8.
//
// Version notes:
//   - v1: synonyms and sources (KIP-226). v3: types and documentation
//     (KIP-569). v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleDescribeConfigs(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		if code, msg := b.configResourceDenied(r, res.ResourceType, res.ResourceName, acl.OpDescribeConfigs); code != 0 {
			rr.ErrorCode, rr.ErrorMessage = code, msg
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		var entries []describedConfig
		var err error
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			entries, err = b.describeTopicConfigs(res.ResourceName)
		case kmsg.ConfigResourceTypeBroker:
			entries, err = b.describeBrokerConfigs(res.ResourceName)
		case kmsg.ConfigResourceTypeBrokerLogger:
			entries, err = b.describeBrokerLoggers(res.ResourceName)
		default:
			err = errInvalidRequest
		}
		if err != nil {
			b.setTopicErr(&rr.ErrorCode, &rr.ErrorMessage, err)
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		want := map[string]bool{}
		for _, n := range res.ConfigNames {
			want[n] = true
		}
		for _, e := range entries {
			if len(res.ConfigNames) > 0 && !want[e.name] {
				continue
			}
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name = e.name
			if !e.null && !e.sensitive {
				v := e.value
				c.Value = &v
			}
			c.IsSensitive = e.sensitive
			c.ReadOnly = e.readOnly
			c.Source = e.source
			c.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig
			if req.IncludeSynonyms {
				for _, s := range e.synonyms {
					cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
					sv := s.value
					cs.Name, cs.Source = s.name, s.source
					if !e.sensitive {
						cs.Value = &sv
					}
					c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
				}
			}
			c.ConfigType = configType(e.typ)
			if req.IncludeDocumentation {
				doc := e.doc
				c.Documentation = &doc
			}
			rr.Configs = append(rr.Configs, c)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}
