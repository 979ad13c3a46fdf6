package assign

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkAssignReplicas: 1,000 partitions, rf 3, over 12 brokers in 3 racks.
func BenchmarkAssignReplicas(b *testing.B) {
	brokers := make([]Broker, 12)
	for i := range brokers {
		brokers[i] = Broker{ID: int32(i), Rack: fmt.Sprintf("r%d", i%3)}
	}
	rnd := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Replicas(brokers, 1000, 3, -1, -1, rnd); err != nil {
			b.Fatal(err)
		}
	}
}
