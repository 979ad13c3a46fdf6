package controller

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/server"
	"samsa/broker/wire"
	"samsa/internal/testwait"
	"samsa/peer"
	"samsa/zkutil"
)

// fakeBroker is a real TCP endpoint (broker/server) that answers ApiVersions with the
// given ranges and records every control request it decodes.
type fakeBroker struct {
	mu   sync.Mutex
	reqs []kmsg.Request
	max  map[int16]int16
}

func (f *fakeBroker) Serve(_ context.Context, _ *server.Conn, req *wire.Request) (kmsg.Response, error) {
	switch body := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := body.ResponseKind().(*kmsg.ApiVersionsResponse)
		for key, maxV := range f.max {
			k := kmsg.NewApiVersionsResponseApiKey()
			k.ApiKey, k.MinVersion, k.MaxVersion = key, 0, maxV
			resp.ApiKeys = append(resp.ApiKeys, k)
		}
		return resp, nil
	default:
		f.mu.Lock()
		f.reqs = append(f.reqs, req.Body)
		f.mu.Unlock()
		return req.Body.ResponseKind(), nil
	}
}

func (f *fakeBroker) requests(key int16) []kmsg.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []kmsg.Request
	for _, r := range f.reqs {
		if r.Key() == key {
			out = append(out, r)
		}
	}
	return out
}

// TestControllerChannelOverPeer sends through the production path (PeerDialer → peer
// → TCP → broker/server) to a broker that supports LeaderAndIsr only up to v4 and
// UpdateMetadata up to v5: the controller sends those versions, with broker epoch (KIP-380).
func TestControllerChannelOverPeer(t *testing.T) {
	fb := &fakeBroker{max: map[int16]int16{18: 3, 4: 4, 5: 3, 6: 5}}
	srv, err := server.New(server.Options{Handler: fb})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("PLAINTEXT", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		cancel()
		<-done
	})
	_, portStr, _ := net.SplitHostPort(addr.String())
	port, _ := strconv.Atoi(portStr)

	t.Parallel()
	cl := newCluster(t)
	zc := cl.zk()
	reg := zkutil.BrokerRegistration{ID: 1, Version: 4, JMXPort: -1, Timestamp: time.Now().UnixMilli(),
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: int32(port)}}}
	epoch, err := zc.RegisterBroker(reg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{BrokerID: 1, ZK: zc, Dialer: PeerDialer{ClientID: "controller-1", Options: []peer.Option{peer.WithDialTimeout(5 * time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	createTopic(t, zc, "wire", map[int32][]int32{0: {1}})
	testwait.For(t, waitTimeout, func() error {
		lais := fb.requests(4)
		if len(lais) == 0 {
			return fmt.Errorf("no LeaderAndIsr received")
		}
		lai := lais[len(lais)-1].(*kmsg.LeaderAndISRRequest)
		if lai.Version != 4 || lai.ControllerID != 1 || lai.ControllerEpoch != 1 || lai.BrokerEpoch != epoch {
			return fmt.Errorf("LeaderAndIsr header v%d %+v (broker epoch want %d)", lai.Version, lai, epoch)
		}
		if len(lai.TopicStates) != 1 || lai.TopicStates[0].Topic != "wire" || len(lai.TopicStates[0].PartitionStates) != 1 {
			return fmt.Errorf("LeaderAndIsr topics %+v", lai.TopicStates)
		}
		ps := lai.TopicStates[0].PartitionStates[0]
		if ps.Leader != 1 || !slices.Equal(ps.ISR, []int32{1}) || !ps.IsNew {
			return fmt.Errorf("LeaderAndIsr partition %+v", ps)
		}
		if len(lai.LiveLeaders) != 1 || lai.LiveLeaders[0].Port != int32(port) {
			return fmt.Errorf("live leaders %+v", lai.LiveLeaders)
		}
		ums := fb.requests(6)
		if len(ums) == 0 {
			return fmt.Errorf("no UpdateMetadata received")
		}
		um := ums[len(ums)-1].(*kmsg.UpdateMetadataRequest)
		if um.Version != 5 || um.BrokerEpoch != epoch || len(um.LiveBrokers) != 1 || len(um.TopicStates) != 1 {
			return fmt.Errorf("UpdateMetadata v%d %+v", um.Version, um)
		}
		return nil
	})
}
