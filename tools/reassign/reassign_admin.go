package reassign

// kafkaAdmin: the Admin API calls of kafka-reassign-partitions and
// kafka-leader-election (--bootstrap-server), sent as kmsg requests over
// peer connections: metadata from a bootstrap broker, controller-only
// APIs to the active controller, broker config changes to the broker itself.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/peer"
	"samsa/tools/internal/tool"
)

// adminRequestTimeout bounds one admin request (Kafka's AdminClient
// default.api.timeout.ms is 60 s; request.timeout.ms 30 s).
const adminRequestTimeout = 30 * time.Second

type kafkaAdmin struct {
	clientID string
	servers  []string
	conns    map[int32]*peer.Client
	boot     *peer.Client
	meta     *kmsg.MetadataResponse
}

func newKafkaAdmin(bootstrap, clientID string) (*kafkaAdmin, error) {
	a := &kafkaAdmin{clientID: clientID, servers: tool.SplitList(bootstrap), conns: map[int32]*peer.Client{}}
	var lastErr error
	for _, s := range a.servers {
		ctx, cancel := context.WithTimeout(context.Background(), adminRequestTimeout)
		c, err := peer.Dial(ctx, s, clientID, peer.WithDialTimeout(10*time.Second))
		cancel()
		if err == nil {
			a.boot = c
			break
		}
		lastErr = err
	}
	if a.boot == nil {
		return nil, fmt.Errorf("tools: no bootstrap server reachable: %w", lastErr)
	}
	if err := a.refresh(nil); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

func (a *kafkaAdmin) close() {
	for _, c := range a.conns {
		c.Close()
	}
	if a.boot != nil {
		a.boot.Close()
	}
}

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
	resp, err := a.boot.Request(ctx, req)
	if err != nil {
		return err
	}
	a.meta = resp.(*kmsg.MetadataResponse)
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

// conn returns a connection to broker id.
func (a *kafkaAdmin) conn(id int32) (*peer.Client, error) {
	if c, ok := a.conns[id]; ok {
		return c, nil
	}
	for _, b := range a.meta.Brokers {
		if b.NodeID == id {
			c := peer.New(b.Host+":"+strconv.Itoa(int(b.Port)), a.clientID, peer.WithDialTimeout(10*time.Second))
			a.conns[id] = c
			return c, nil
		}
	}
	return nil, fmt.Errorf("tools: broker %d is not available", id)
}

// toController sends req to the active controller, retrying NOT_CONTROLLER
// answers after a metadata refresh (bounded).
func (a *kafkaAdmin) toController(req kmsg.Request, topErr func(kmsg.Response) int16) (kmsg.Response, error) {
	var lastErr error
	for attempt := 0; attempt < 10; attempt++ {
		if attempt > 0 {
			time.Sleep(200 * time.Millisecond)
			if err := a.refresh([]string{}); err != nil {
				lastErr = err
				continue
			}
		}
		c, err := a.conn(a.meta.ControllerID)
		if err != nil {
			lastErr = err
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), adminRequestTimeout)
		resp, err := c.Request(ctx, req)
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		if code := topErr(resp); code == kerr.NotController.Code {
			lastErr = kerr.NotController
			continue
		}
		return resp, nil
	}
	return nil, lastErr
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
	target := a.boot
	if typ == kmsg.ConfigResourceTypeBroker {
		id, err := strconv.Atoi(name)
		if err != nil {
			return fmt.Errorf("tools: bad broker id %q", name)
		}
		if target, err = a.conn(int32(id)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminRequestTimeout)
	defer cancel()
	resp, err := target.Request(ctx, req)
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
