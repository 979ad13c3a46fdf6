// Package promtext serves a go-metrics registry in the Prometheus text
// exposition format (version 0.0.4) over HTTP, so a broker started with
// metrics.listener=http://host:port can be scraped without a JMX exporter.
//
// Owns: the mapping of Kafka-style metric names to Prometheus names and
// labels, the rendering of each go-metrics kind, and a small HTTP server
// for GET /metrics.
//
// Must never import: any other samsa package (it is a tier-0 leaf), a
// Prometheus client library, logrus.
//
// Names: a registry name "domain:type=T,name=N,k1=v1,..." (Kafka's MBean
// name, as broker/metrics.go and broker/server/metrics.go register them)
// becomes the metric "domain_T_N" in lower case with every character
// outside [a-z0-9_] replaced by '_', and the remaining key=value pairs
// become labels (sorted by key). A name without ':' is sanitised whole
// and has no labels. Examples:
//
//	kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t
//	  → kafka_server_brokertopicmetrics_messagesinpersec_total{topic="t"}
//	kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce
//	  → kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"}
//
// Kinds: Counter → counter "<name>_total"; Meter → counter "<name>_total"
// plus gauge "<name>_rate" with label window="1m"|"5m"|"15m"|"mean"
// (events per second); Gauge, GaugeFloat64 and functional gauges → gauge
// "<name>"; Histogram → summary "<name>" with quantiles 0.5, 0.75, 0.95,
// 0.98, 0.99, 0.999 (Kafka's), "<name>_sum" and "<name>_count"; Timer →
// summary "<name>_seconds" (nanoseconds converted to seconds) and a meter
// as above; EWMA → gauge "<name>_rate". Families are written in name
// order and the samples of a family in label order, so the output for a
// given registry state is deterministic. When two registry entries map to
// the same family with different kinds, the later one (in registry name
// order) is skipped.
//
// Concurrency: Write and the handler only read the registry (go-metrics
// snapshots are safe for concurrent use); Server is safe for concurrent
// use, Close may be called more than once.
package promtext
