package zkutil

import "testing"

func TestSanitizeAsKafka(t *testing.T) {
	for in, want := range map[string]string{"alice": "alice", "CN=a b,O=x": "CN%3Da%20b%2CO%3Dx",
		"a*b~c": "a%2Ab%7Ec", "é": "%C3%A9", "<default>": "%3Cdefault%3E", "a+b": "a%2Bb"} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		if back := Desanitize(Sanitize(in)); back != in {
			t.Errorf("Desanitize(Sanitize(%q)) = %q", in, back)
		}
	}
	if got := Desanitize("bad%zz"); got != "bad%zz" {
		t.Errorf("Desanitize of invalid encoding = %q", got)
	}
}

func TestQuotaEntityPaths(t *testing.T) {
	u, c := "CN=alice bob", "<default>"
	for _, tc := range []struct {
		e          QuotaEntity
		typ, name  string
		changePath string
	}{
		{QuotaEntity{HasUser: true, User: &u}, "users", "CN%3Dalice%20bob", "users/CN%3Dalice%20bob"},
		{QuotaEntity{HasClient: true}, "clients", "<default>", "clients/<default>"},
		{QuotaEntity{HasUser: true, HasClient: true, Client: &c}, "users/<default>/clients", "%3Cdefault%3E",
			"users/<default>/clients/%3Cdefault%3E"},
	} {
		typ, name := tc.e.ConfigEntity()
		if typ != tc.typ || name != tc.name {
			t.Errorf("%+v: (%s, %s), want (%s, %s)", tc.e, typ, name, tc.typ, tc.name)
		}
		back, ok := ParseQuotaEntityPath(tc.changePath)
		if !ok {
			t.Fatalf("%s not parsed", tc.changePath)
		}
		if bt, bn := back.ConfigEntity(); bt != typ || bn != name {
			t.Errorf("%s parsed back to (%s, %s)", tc.changePath, bt, bn)
		}
	}
	for _, bad := range []string{"topics/t", "users", "users//clients/x", "users/a/b/c", ""} {
		if _, ok := ParseQuotaEntityPath(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
