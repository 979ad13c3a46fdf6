package reassign

// kafkaAdmin: the Admin API calls of kafka-reassign-partitions and
// kafka-leader-election (--bootstrap-server), sent as kmsg requests through
// a franz-go client (kgo), which routes each as Kafka's AdminClient does:
// metadata to any broker, the controller-only APIs
// (AlterPartitionReassignments, ListPartitionReassignments, ElectLeaders)
// to the active controller, a broker resource's IncrementalAlterConfigs to
// that broker. kadm has the same calls, but its AlterPartitionAssignments
// cannot carry the Samsa tag that asks for replicas to start at the
// leader's log end, so the requests are built here and kgo only carries
// them.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/tools/internal/tool"
)

// adminRequestTimeout bounds one admin request (Kafka's AdminClient
// default.api.timeout.ms is 60 s; request.timeout.ms 30 s).
const adminRequestTimeout = 30 * time.Second

// adminRetries and adminRetryBackoff bound the retries of one request
// (a NOT_CONTROLLER answer while the controller moves, a refused
// connection): 10 attempts 200 ms apart, within adminRequestTimeout.
const (
	adminRetries      = 10
	adminRetryBackoff = 200 * time.Millisecond
)

type kafkaAdmin struct {
	cl   *kgo.Client
	meta *kmsg.MetadataResponse
}

func newKafkaAdmin(bootstrap, clientID string) (*kafkaAdmin, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(tool.SplitList(bootstrap)...),
		kgo.ClientID(clientID),
		kgo.DialTimeout(10*time.Second),
		kgo.RequestRetries(adminRetries),
		kgo.RetryBackoffFn(func(int) time.Duration { return adminRetryBackoff }),
	)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	a := &kafkaAdmin{cl: cl}
	if err := a.refresh(nil); err != nil {
		cl.Close()
		return nil, fmt.Errorf("tools: no bootstrap server reachable: %w", err)
	}
	return a, nil
}

func (a *kafkaAdmin) close() { a.cl.Close() }

// refresh reads metadata for topics (nil: all topics).
func (a *kafkaAdmin) refresh(topics []string) error {
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminRequestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return err
	}
	a.meta = resp
	return nil
}

// brokerIDs returns the live brokers' ids.
func (a *kafkaAdmin) brokerIDs() []int32 {
	ids := make([]int32, 0, len(a.meta.Brokers))
	for _, b := range a.meta.Brokers {
		ids = append(ids, b.NodeID)
	}
	return ids
}

// toController sends a controller-only request; kgo finds the controller
// and retries NOT_CONTROLLER answers (bounded by adminRetries). topErr
// reads the response's top-level error code, so that an answer still
// NOT_CONTROLLER after the retries is an error, not a result.
func (a *kafkaAdmin) toController(req kmsg.Request, topErr func(kmsg.Response) int16) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminRequestTimeout)
	defer cancel()
	resp, err := a.cl.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	if code := topErr(resp); code == kerr.NotController.Code {
		return nil, kerr.NotController
	}
	return resp, nil
}

// alterConfigs applies set and delete operations to one resource with
// IncrementalAlterConfigs; broker resources go to that broker.
func (a *kafkaAdmin) alterConfigs(typ kmsg.ConfigResourceType, name string, set map[string]string, del []string) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = typ, name
	for _, k := range tool.SortedKeys(set) {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(set[k])
		res.Configs = append(res.Configs, c)
	}
	for _, k := range del {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = k, kmsg.IncrementalAlterConfigOpDelete
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	if typ == kmsg.ConfigResourceTypeBroker {
		if _, err := strconv.Atoi(name); err != nil {
			return fmt.Errorf("tools: bad broker id %q", name)
		}
	}
	// kgo sends a broker resource to that broker and a topic to any broker.
	ctx, cancel := context.WithTimeout(context.Background(), adminRequestTimeout)
	defer cancel()
	resp, err := a.cl.Request(ctx, req)
	if err != nil {
		return err
	}
	for _, r := range resp.(*kmsg.IncrementalAlterConfigsResponse).Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return adminCodeError(r.ErrorCode, r.ErrorMessage)
		}
	}
	return nil
}

// adminCodeError words a Kafka error code as the Java client's exception
// message.
func adminCodeError(code int16, msg *string) error {
	if msg != nil && *msg != "" {
		return tool.Errorf("%s: %s", tool.JavaExceptionClass(code), *msg)
	}
	return tool.Error(tool.JavaExceptionText(code))
}
