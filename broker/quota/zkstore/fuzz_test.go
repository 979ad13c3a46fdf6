package zkstore

import (
	"testing"

	"samsa/broker/quota"
	"samsa/zkutil"
)

// FuzzQuotaEntityPath: config change entity paths come from ZooKeeper;
// parsing never panics, and a parsed entity's own path parses back to the
// same quota entity (names survive sanitising).
func FuzzQuotaEntityPath(f *testing.F) {
	for _, s := range []string{"clients/app", "clients/<default>", "users/ANONYMOUS", "users/<default>",
		"users/CN%3Dalice%20bob/clients/%3Cdefault%3E", "users/<default>/clients/x", "users/u/clients/<default>",
		"topics/t", "brokers/1", "", "users//clients/", "clients/%zz", "users/a/b/c", "clients/a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		e, ok := zkutil.ParseQuotaEntityPath(path)
		if !ok {
			return
		}
		typ, name := e.ConfigEntity()
		back, ok := zkutil.ParseQuotaEntityPath(typ + "/" + name)
		if !ok || ToQuota(back) != ToQuota(e) {
			t.Fatalf("%q parsed to %+v, whose path %s/%s parses to %+v (ok %v)", path, ToQuota(e), typ, name, ToQuota(back), ok)
		}
		quota.Resolve(quota.Table{ToQuota(e): 1}, zkutil.Sanitize("ANONYMOUS"), "client")
	})
}
