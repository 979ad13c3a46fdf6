package brokertest

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"samsa/broker"
)

// ScrapeValue reads one sample (metric name with labels, as printed) from
// broker i's metrics.listener endpoint.
func ScrapeValue(c *Cluster, i int, sample string) (float64, error) {
	addr := c.Broker(i).Addr(broker.MetricsListenerName)
	if addr == nil {
		return 0, fmt.Errorf("broker %d has no metrics listener", i)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0, fmt.Errorf("no %s in:\n%s", sample, body)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// WaitMetric polls broker i's metrics endpoint until sample satisfies ok.
func WaitMetric(t *testing.T, c *Cluster, i int, sample string, ok func(float64) bool) float64 {
	t.Helper()
	var v float64
	WaitFor(t, 30*time.Second, func() error {
		var err error
		if v, err = ScrapeValue(c, i, sample); err != nil {
			return err
		}
		if !ok(v) {
			return fmt.Errorf("%s = %v", sample, v)
		}
		return nil
	})
	return v
}
