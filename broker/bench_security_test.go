package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// BenchmarkSecurityTLSvsPlaintext produces and consumes 1 KiB records over
// the PLAINTEXT and the SSL (mutual TLS) listener of the same broker, side by
// side in one run (issue 16's targets: TLS produce >= 0.6x, consume >= 0.5x
// plaintext). One op is a batch of 100 records; MB/s compares directly.
// Plaintext consume keeps the sendfile path; TLS copies through crypto/tls.
func BenchmarkSecurityTLSvsPlaintext(b *testing.B) {
	sc := brokertest.NewSecureCluster(b, 1)
	sc.CreateTopic(b, "tlsbench", 1, 1)
	cert := sc.CA.Client(b, pkix.Name{CommonName: "bench"})
	mtls := sc.ClientTLS()
	mtls.Certificates = []tls.Certificate{cert.TLS()}
	listeners := []struct {
		name string
		opts []kgo.Opt
	}{
		{"PLAINTEXT", nil},
		{"SSL", []kgo.Opt{kgo.DialTLSConfig(mtls)}},
	}
	value := make([]byte, 1024)
	const perOp = 100
	for _, l := range listeners {
		addr := sc.Broker(0).Addr(l.name).String()
		b.Run("Produce/"+l.name, func(b *testing.B) {
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("tlsbench"),
				kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, l.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			recs := make([]*kgo.Record, perOp)
			b.SetBytes(perOp * int64(len(value)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range recs {
					recs[j] = &kgo.Record{Value: value}
				}
				if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Consume/"+l.name, func(b *testing.B) {
			// The log holds at least what the produce runs wrote; each op
			// consumes 100 records from a fresh offset range.
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics("tlsbench"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(8 << 20)}, l.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			need := b.N * perOp
			filler, err := kgo.NewClient(kgo.SeedBrokers(sc.Broker(0).Addr("PLAINTEXT").String()), kgo.DefaultProduceTopic("tlsbench"),
				kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			if err != nil {
				b.Fatal(err)
			}
			for written := 0; written < need; written += perOp {
				recs := make([]*kgo.Record, perOp)
				for j := range recs {
					recs[j] = &kgo.Record{Value: value}
				}
				if err := filler.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			filler.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			b.SetBytes(perOp * int64(len(value)))
			b.ResetTimer()
			for got := 0; got < need; {
				fs := cl.PollFetches(ctx)
				if ctx.Err() != nil {
					b.Fatalf("consumed %d of %d", got, need)
				}
				got += fs.NumRecords()
			}
		})
	}
}
