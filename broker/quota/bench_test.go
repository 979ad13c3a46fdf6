package quota

import "testing"

// BenchmarkQuotaDisabled is the whole per-request cost without quotas: the check the broker
// makes before anything else.
func BenchmarkQuotaDisabled(b *testing.B) {
	m := NewManager(Options{})
	n := 0
	for i := 0; i < b.N; i++ {
		if m.AnyEnabled() {
			n++
		}
	}
	if n != 0 {
		b.Fatal("enabled")
	}
}

// BenchmarkQuotaRecord is the per-request cost with quotas configured: resolve the entity
// (multi-level table), find the sensor, record and measure.
func BenchmarkQuotaRecord(b *testing.B) {
	m := NewManager(Options{})
	m.SetQuotas(Produce, Table{UserEntity("other"): 1, ClientEntity("other"): 1, DefaultUserDefaultClient: 1 << 40})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h := m.Get(Produce, "ANONYMOUS", "client")
		if h.Record(10_000) != 0 {
			b.Fatal("throttled")
		}
	}
}
