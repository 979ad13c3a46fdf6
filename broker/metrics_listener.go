package broker

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"samsa/broker/promtext"
	"samsa/config"
	"samsa/controller"
)

// MetricsListenerName is the name under which Addr returns the bound
// address of the metrics.listener HTTP endpoint (a config key, so it never
// collides with a Kafka listener name).
const MetricsListenerName = "metrics.listener"

// controllerMBeans maps the controller's bare metric names to Kafka's
// MBean names, for the Prometheus endpoint.
var controllerMBeans = map[string]string{
	controller.MetricActiveControllerCount:        "kafka.controller:type=KafkaController,name=ActiveControllerCount",
	controller.MetricOfflinePartitionsCount:       "kafka.controller:type=KafkaController,name=OfflinePartitionsCount",
	controller.MetricGlobalPartitionCount:         "kafka.controller:type=KafkaController,name=GlobalPartitionCount",
	controller.MetricGlobalTopicCount:             "kafka.controller:type=KafkaController,name=GlobalTopicCount",
	controller.MetricEventQueueSize:               "kafka.controller:type=ControllerEventManager,name=EventQueueSize",
	controller.MetricEventQueueTimeMs:             "kafka.controller:type=ControllerEventManager,name=EventQueueTimeMs",
	controller.MetricUncleanLeaderElectionsPerSec: "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec",
	controller.MetricControllerChangeCount:        "kafka.controller:type=ControllerStats,name=ControllerChangeCount",
}

func mbeanName(name string) string {
	if m, ok := controllerMBeans[name]; ok {
		return m
	}
	return name
}

// startMetricsListener serves the broker's registry in Prometheus format
// on metrics.listener (when set) until ctx ends.
func (b *Broker) startMetricsListener(ctx context.Context) error {
	if b.cfg.MetricsListener == "" {
		return nil
	}
	addr, err := config.ParseHTTPListener(b.cfg.MetricsListener)
	if err != nil {
		return fmt.Errorf("broker: metrics.listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promtext.Handler(b.opts.Registry, mbeanName))
	mux.HandleFunc(GroupRebalancesPath, b.serveGroupRebalances)
	srv, err := promtext.ListenHandler(addr, mux)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.mu.Lock()
	b.mu.addrs[MetricsListenerName] = srv.Addr()
	b.mu.Unlock()
	b.log.WithField("addr", srv.Addr().String()).Info("serving metrics in Prometheus format at /metrics, group rebalances at " + GroupRebalancesPath)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		<-ctx.Done()
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(cctx)
	}()
	return nil
}
