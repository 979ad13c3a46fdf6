package zkutil_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"samsa/zkutil"
)

// FuzzZKCodecs feeds arbitrary bytes to every znode decoder. Invariants:
// no decoder panics; whatever decodes re-encodes, and the re-encoded bytes
// decode to the same value (for the codecs whose Go value holds all of the
// format).
func FuzzZKCodecs(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("7"))
	f.Add([]byte(`{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}`))
	f.Add([]byte("TOPIC:orders"))
	f.Add([]byte(`{"version":1,"resourceType":"TOPIC","name":"app-","patternType":"PREFIXED"}`))
	f.Add([]byte(`{"version":4,"endpoints":["A://[::1]:1"],"listener_security_protocol_map":{"A":"SSL"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := zkutil.DecodeBrokerRegistration(data); err == nil {
			if _, err := zkutil.DecodeBrokerRegistration(r.Encode()); err != nil {
				t.Fatalf("broker re-decode: %v", err)
			}
		}
		if a, err := zkutil.DecodeTopicAssignment(data); err == nil {
			b, err := zkutil.DecodeTopicAssignment(a.Encode())
			if err != nil || !reflect.DeepEqual(a.Partitions, b.Partitions) || a.TopicID != b.TopicID {
				t.Fatalf("topic round trip: %+v %+v %v", a, b, err)
			}
		}
		if s, err := zkutil.DecodePartitionState(data); err == nil {
			s2, err := zkutil.DecodePartitionState(s.Encode())
			if err != nil || !s.Equal(s2) {
				t.Fatalf("state round trip: %+v %+v %v", s, s2, err)
			}
		}
		if c, err := zkutil.DecodeControllerInfo(data); err == nil {
			if c2, err := zkutil.DecodeControllerInfo(c.Encode()); err != nil || c2 != c {
				t.Fatalf("controller round trip: %+v %+v %v", c, c2, err)
			}
		}
		_, _ = zkutil.DecodeControllerEpoch(data)
		if id, err := zkutil.DecodeClusterID(data); err == nil {
			if id2, err := zkutil.DecodeClusterID(zkutil.EncodeClusterID(id)); err != nil || id2 != id {
				t.Fatalf("cluster id round trip: %q %q %v", id, id2, err)
			}
		}
		if cfg, err := zkutil.DecodeEntityConfig(data); err == nil {
			cfg2, err := zkutil.DecodeEntityConfig(zkutil.EncodeEntityConfig(cfg))
			if err != nil || !reflect.DeepEqual(cfg, cfg2) {
				t.Fatalf("config round trip: %v %v %v", cfg, cfg2, err)
			}
		}
		if acls, err := zkutil.DecodeACLs(data); err == nil {
			back, err := zkutil.DecodeACLs(zkutil.EncodeACLs(acls))
			if err != nil || len(back) != len(acls) {
				t.Fatalf("acls round trip: %+v %+v %v", acls, back, err)
			}
		}
		if typ, name, err := zkutil.DecodeLiteralACLChange(data); err == nil {
			t2, n2, err := zkutil.DecodeLiteralACLChange(zkutil.EncodeLiteralACLChange(typ, name))
			if err != nil || t2 != typ || n2 != name {
				t.Fatalf("literal acl change round trip: %q %q %v", t2, n2, err)
			}
		}
		if typ, name, pt, err := zkutil.DecodeExtendedACLChange(data); err == nil {
			t2, n2, p2, err := zkutil.DecodeExtendedACLChange(zkutil.EncodeExtendedACLChange(typ, name, pt))
			if err != nil || t2 != typ || n2 != name || p2 != pt {
				t.Fatalf("extended acl change round trip: %v", err)
			}
		}
		if p, err := zkutil.DecodeConfigChange(data); err == nil {
			_, _ = zkutil.DecodeConfigChange(zkutil.EncodeConfigChange(p))
		}
		if tps, err := zkutil.DecodeIsrChangeNotification(data); err == nil {
			tps2, err := zkutil.DecodeIsrChangeNotification(zkutil.EncodeIsrChangeNotification(tps))
			if err != nil || !reflect.DeepEqual(tps, tps2) {
				t.Fatalf("isr change round trip: %v %v %v", tps, tps2, err)
			}
		}
		_, _ = zkutil.DecodePreferredReplicaElection(data)
		if r, err := zkutil.DecodeReassignment(data); err == nil {
			if _, err := zkutil.DecodeReassignment(zkutil.EncodeReassignment(r)); err != nil {
				t.Fatalf("reassignment re-decode: %v", err)
			}
		}
		if r, err := zkutil.DecodeConsumerRegistration(data); err == nil {
			if _, err := zkutil.DecodeConsumerRegistration(r.Encode()); err != nil {
				t.Fatalf("consumer re-decode: %v", err)
			}
		}
		_, _ = zkutil.DecodeConsumerOffset(data)
		if b, err := zkutil.DecodeProducerIDBlock(data); err == nil {
			if b2, err := zkutil.DecodeProducerIDBlock(b.Encode()); err != nil || b2 != b {
				t.Fatalf("pid block round trip: %+v %+v %v", b, b2, err)
			}
		}
		if fz, err := zkutil.DecodeFeatureZNode(data); err == nil {
			_ = fz.Encode()
		}
		_, _ = zkutil.DecodeLogDirEvent(data)
	})
}
