package quota

import "testing"

// Kafka's precedence: removing the most specific entity each time reveals the next one.
func TestQuotaResolvePrecedence(t *testing.T) {
	const u, c = "alice", "app"
	order := []struct {
		e    Entity
		tags Tags
	}{
		{UserClientEntity(u, c), Tags{u, c}},
		{UserDefaultClientEntity(u), Tags{u, c}},
		{UserEntity(u), Tags{User: u}},
		{DefaultUserClientEntity(c), Tags{u, c}},
		{DefaultUserDefaultClient, Tags{u, c}},
		{DefaultUserEntity, Tags{User: u}},
		{ClientEntity(c), Tags{Client: c}},
		{DefaultClientEntity, Tags{Client: c}},
	}
	table := Table{}
	for i, o := range order {
		table[o.e] = float64(i + 1)
		// Entities of other users and clients never match.
		table[UserClientEntity("bob", c)] = 1000
		table[UserEntity("bob")] = 1000
		table[ClientEntity("other")] = 1000
	}
	for i, o := range order {
		tags, bound := Resolve(table, u, c)
		if bound != float64(i+1) || tags != o.tags {
			t.Fatalf("step %d: got %v %v, want %v %v", i+1, tags, bound, o.tags, float64(i+1))
		}
		delete(table, o.e)
	}
	tags, bound := Resolve(table, u, c)
	if bound != Unlimited || tags != (Tags{Client: c}) {
		t.Fatalf("no match: got %v %v", tags, bound)
	}
}

// A raw client id "<default>" is its own entity, not the default.
func TestQuotaResolveDefaultIsNotAName(t *testing.T) {
	table := Table{ClientEntity("<default>"): 5}
	if _, bound := Resolve(table, "ANONYMOUS", "x"); bound != Unlimited {
		t.Fatalf("client x matched a client named <default>: %v", bound)
	}
	if _, bound := Resolve(table, "ANONYMOUS", "<default>"); bound != 5 {
		t.Fatalf("client <default>: %v, want 5", bound)
	}
}
