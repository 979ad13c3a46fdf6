package acl

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"samsa/zkutil"
)

// maxUpdateRetries bounds the conditional-write loop of one resource
// (Kafka AclAuthorizer.maxUpdateRetries = 10).
const maxUpdateRetries = 10

// Store reads and writes ACLs in ZooKeeper exactly as Kafka's AclAuthorizer
// does: one znode per resource pattern holding its whole ACL set, written
// conditionally on its zkVersion, then a change notification so every
// broker reloads that resource. It keeps no state; kafka-acls.sh
// --authorizer-properties uses it directly, the Authorizer through its
// cache. Safe for concurrent use (ZooKeeper serialises the writes).
type Store struct {
	zk *zkutil.Client
}

// NewStore returns a Store over zk.
func NewStore(zk *zkutil.Client) *Store { return &Store{zk: zk} }

// toZK converts a resource to its znode name; types without a path name
// (ANY, UNKNOWN) never reach here (Validate).
func toZK(r Resource) zkutil.ACLResource {
	pt := zkutil.ACLPatternLiteral
	if r.Pattern == PatternPrefixed {
		pt = zkutil.ACLPatternPrefixed
	}
	return zkutil.ACLResource{Type: pascal(r.Type.String()), Name: r.Name, PatternType: pt}
}

// fromZK converts a znode name back; an unknown type or pattern is
// reported so the caller can skip it.
func fromZK(z zkutil.ACLResource) (Resource, bool) {
	r := Resource{Type: ParseResourceType(z.Type), Name: z.Name, Pattern: ParsePatternType(z.PatternType)}
	return r, r.Type.concrete() && (r.Pattern == PatternLiteral || r.Pattern == PatternPrefixed)
}

func entriesToZK(es []Entry) []zkutil.ACLEntry {
	out := make([]zkutil.ACLEntry, len(es))
	for i, e := range es {
		out[i] = zkutil.ACLEntry{Principal: e.Principal.String(), PermissionType: pascal(e.Permission.String()),
			Operation: pascal(e.Operation.String()), Host: e.Host}
	}
	return out
}

// entriesFromZK parses stored entries leniently, as AclEntry.fromBytes: an
// unknown operation or permission becomes UNKNOWN (it then matches
// nothing); a principal without a colon is skipped.
func entriesFromZK(zs []zkutil.ACLEntry) []Entry {
	out := make([]Entry, 0, len(zs))
	for _, z := range zs {
		p, err := ParsePrincipal(z.Principal)
		if err != nil {
			continue
		}
		out = append(out, Entry{Principal: p, Host: z.Host, Operation: ParseOperation(z.Operation), Permission: ParsePermission(z.PermissionType)})
	}
	return out
}

// Get reads one resource's entries and zkVersion (zkutil.ACLNoZkVersion
// when it has no znode).
func (s *Store) Get(r Resource) ([]Entry, int32, error) {
	zs, zkv, err := s.zk.GetACLs(toZK(r))
	if err != nil {
		return nil, 0, err
	}
	return entriesFromZK(zs), zkv, nil
}

// LoadAll reads every resource's ACLs (AclAuthorizer.loadCache).
func (s *Store) LoadAll() (*snapshot, error) {
	rs, err := s.zk.ListACLResources()
	if err != nil {
		return nil, err
	}
	snap := emptySnapshot()
	for _, z := range rs {
		r, ok := fromZK(z)
		if !ok {
			continue
		}
		es, zkv, err := s.Get(r)
		if err != nil {
			return nil, fmt.Errorf("acl: load %s: %w", r, err)
		}
		if len(es) > 0 {
			snap.acls[r] = es
			snap.zkv[r] = zkv
		}
	}
	snap.index()
	return snap, nil
}

// update applies fn to r's current entries until the conditional write
// succeeds (Kafka updateResourceAcls), writes the change notification when
// the set changed, and returns the stored entries and zkVersion.
func (s *Store) update(r Resource, fn func([]Entry) []Entry) ([]Entry, int32, error) {
	cur, zkv, err := s.Get(r)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		next := fn(cur)
		if sameEntries(cur, next) {
			return cur, zkv, nil
		}
		nzkv, err := s.zk.SetACLs(toZK(r), entriesToZK(next), zkv)
		if err == nil {
			if err := s.zk.WriteACLChange(toZK(r)); err != nil {
				return next, nzkv, fmt.Errorf("acl: change notification for %s: %w", r, err)
			}
			return next, nzkv, nil
		}
		if !errors.Is(err, zkutil.ErrBadVersion) && !errors.Is(err, zkutil.ErrNodeExists) {
			return nil, 0, err
		}
		if attempt == maxUpdateRetries {
			return nil, 0, fmt.Errorf("%w: %s after %d attempts", ErrUpdateConflict, r, attempt+1)
		}
		// Kafka backs off retry.backoff.ms plus jitter; a short jittered
		// pause lets the competing writer finish.
		time.Sleep(time.Duration(1+rand.IntN(20)) * time.Millisecond)
		if cur, zkv, err = s.Get(r); err != nil {
			return nil, 0, err
		}
	}
}

func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[Entry]int, len(a))
	for _, e := range a {
		set[e]++
	}
	for _, e := range b {
		if set[e] == 0 {
			return false
		}
		set[e]--
	}
	return true
}

// Change is the stored state of one resource after a write.
type Change struct {
	Resource  Resource
	Entries   []Entry
	ZkVersion int32
}

// Create adds bindings, grouped by resource (AclAuthorizer.createAcls). It
// returns one error per binding (nil: stored) and the resources it changed.
func (s *Store) Create(bindings []Binding) ([]error, []Change) {
	errs := make([]error, len(bindings))
	byRes := map[Resource][]int{}
	var order []Resource
	for i, b := range bindings {
		if err := b.Validate(); err != nil {
			errs[i] = err
			continue
		}
		if _, ok := byRes[b.Resource]; !ok {
			order = append(order, b.Resource)
		}
		byRes[b.Resource] = append(byRes[b.Resource], i)
	}
	var changes []Change
	for _, r := range order {
		idx := byRes[r]
		es, zkv, err := s.update(r, func(cur []Entry) []Entry {
			next := append([]Entry(nil), cur...)
			for _, i := range idx {
				if !contains(next, bindings[i].Entry) {
					next = append(next, bindings[i].Entry)
				}
			}
			return next
		})
		for _, i := range idx {
			errs[i] = err
		}
		if err == nil {
			changes = append(changes, Change{Resource: r, Entries: es, ZkVersion: zkv})
		}
	}
	return errs, changes
}

func contains(es []Entry, e Entry) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}

// Deleted is one binding a Delete removed, with the error of its write.
type Deleted struct {
	Binding Binding
	Err     error
}

// Delete removes every binding matching a filter, over the given candidate
// resources plus the one resource a precise filter names
// (AclAuthorizer.deleteAcls). It returns, per filter, the bindings removed
// for it, and the resources it changed.
func (s *Store) Delete(filters []Filter, known []Resource) ([][]Deleted, []Change) {
	out := make([][]Deleted, len(filters))
	cands := map[Resource]bool{}
	var order []Resource
	add := func(r Resource) {
		if !cands[r] {
			cands[r] = true
			order = append(order, r)
		}
	}
	for _, r := range known {
		add(r)
	}
	for _, f := range filters {
		if r, ok := f.exactResource(); ok {
			add(r)
		}
	}
	var changes []Change
	for _, r := range order {
		var fs []int
		for i, f := range filters {
			if f.MatchesResource(r) {
				fs = append(fs, i)
			}
		}
		if len(fs) == 0 {
			continue
		}
		var removed map[Entry]int // entry → first filter index that matched it
		es, zkv, err := s.update(r, func(cur []Entry) []Entry {
			removed = map[Entry]int{}
			next := make([]Entry, 0, len(cur))
			for _, e := range cur {
				hit := -1
				for _, i := range fs {
					if filters[i].MatchesEntry(e) {
						hit = i
						break
					}
				}
				if hit >= 0 {
					removed[e] = hit
				} else {
					next = append(next, e)
				}
			}
			return next
		})
		for e, i := range removed {
			out[i] = append(out[i], Deleted{Binding: Binding{Resource: r, Entry: e}, Err: err})
		}
		if err == nil && len(removed) > 0 {
			changes = append(changes, Change{Resource: r, Entries: es, ZkVersion: zkv})
		}
	}
	return out, changes
}

// List returns every stored binding matching f, read from ZooKeeper.
func (s *Store) List(f Filter) ([]Binding, error) {
	snap, err := s.LoadAll()
	if err != nil {
		return nil, err
	}
	return snap.list(f), nil
}
