package server

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestServerSaramaClient: Sarama's own codec (not kmsg) talks to the server: ApiVersions v3
// (flexible body behind a v0 response header) and Metadata.
func TestServerSaramaClient(t *testing.T) {
	_, addr, _ := startServer(t, newTestHandler(), nil)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "sarama-test"
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	av, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "sarama", ClientSoftwareVersion: "1.61.1"})
	if err != nil {
		t.Fatal(err)
	}
	if av.ErrorCode != 0 || len(av.ApiKeys) != 5 {
		t.Fatalf("%+v", av)
	}
	md, err := b.GetMetadata(&sarama.MetadataRequest{Version: 9, Topics: []string{"s1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Name != "s1" {
		t.Fatalf("%+v", md)
	}
}

// TestServerFranzGoClient: kgo opens with ApiVersions at kmsg's highest version (above the
// test handler's v3), gets the KIP-511 UNSUPPORTED_VERSION answer, retries and then issues
// Metadata.
func TestServerFranzGoClient(t *testing.T) {
	h := newTestHandler()
	_, addr, _ := startServer(t, h, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("kgo-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("k1")
	req.Topics = append(req.Topics, mt)
	resp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	md := resp.(*kmsg.MetadataResponse)
	if len(md.Topics) != 1 || *md.Topics[0].Topic != "k1" {
		t.Fatalf("%+v", md)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	av := h.vers[18]
	if len(av) < 2 || av[0] <= 3 || av[1] > 3 {
		t.Fatalf("ApiVersions versions received: %v, want one above 3 then a retry within 0-3", av)
	}
}
