package acl

import "sort"

// snapshot is one immutable state of the ACL cache. Readers load it
// atomically and never lock; writers build a new one (copy-on-write), so an
// authorization is never blocked by an ACL update.
type snapshot struct {
	acls map[Resource][]Entry // every resource with at least one ACL; slices never modified
	zkv  map[Resource]int32   // zkVersion of each resource znode as last read or written
	// prefixLens[t] holds the distinct lengths of type t's prefixed
	// patterns, ascending, so a lookup probes only prefixes that exist.
	prefixLens [numResourceTypes][]int
}

func emptySnapshot() *snapshot {
	return &snapshot{acls: map[Resource][]Entry{}, zkv: map[Resource]int32{}}
}

// with returns a copy of s where r has entries at zkv (none: removed).
func (s *snapshot) with(r Resource, entries []Entry, zkv int32) *snapshot {
	n := &snapshot{acls: make(map[Resource][]Entry, len(s.acls)+1), zkv: make(map[Resource]int32, len(s.zkv)+1)}
	for k, v := range s.acls {
		n.acls[k] = v
	}
	for k, v := range s.zkv {
		n.zkv[k] = v
	}
	if len(entries) == 0 {
		delete(n.acls, r)
		delete(n.zkv, r)
	} else {
		n.acls[r] = entries
		n.zkv[r] = zkv
	}
	n.index()
	return n
}

func (s *snapshot) index() {
	var seen [numResourceTypes]map[int]bool
	for r := range s.acls {
		if r.Pattern != PatternPrefixed || !r.Type.concrete() {
			continue
		}
		if seen[r.Type] == nil {
			seen[r.Type] = map[int]bool{}
		}
		if !seen[r.Type][len(r.Name)] {
			seen[r.Type][len(r.Name)] = true
			s.prefixLens[r.Type] = append(s.prefixLens[r.Type], len(r.Name))
		}
	}
	for t := range s.prefixLens {
		sort.Ints(s.prefixLens[t])
	}
}

// matching appends to sets the ACLs of every pattern that applies to the
// literal resource (t, name): literal "*", the literal name and every
// prefixed pattern that is a prefix of name (AclAuthorizer.matchingAcls).
func (s *snapshot) matching(sets [][]Entry, t ResourceType, name string) [][]Entry {
	if e := s.acls[Resource{Type: t, Name: Wildcard, Pattern: PatternLiteral}]; len(e) > 0 {
		sets = append(sets, e)
	}
	if e := s.acls[Resource{Type: t, Name: name, Pattern: PatternLiteral}]; len(e) > 0 && name != Wildcard {
		sets = append(sets, e)
	}
	if t.concrete() {
		for _, l := range s.prefixLens[t] {
			if l > len(name) {
				break
			}
			if e := s.acls[Resource{Type: t, Name: name[:l], Pattern: PatternPrefixed}]; len(e) > 0 {
				sets = append(sets, e)
			}
		}
	}
	return sets
}

// list returns the bindings matching f, sorted by resource then as stored.
func (s *snapshot) list(f Filter) []Binding {
	var rs []Resource
	for r := range s.acls {
		if f.MatchesResource(r) {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Pattern != b.Pattern {
			return a.Pattern < b.Pattern
		}
		return a.Name < b.Name
	})
	var out []Binding
	for _, r := range rs {
		for _, e := range s.acls[r] {
			if f.MatchesEntry(e) {
				out = append(out, Binding{Resource: r, Entry: e})
			}
		}
	}
	return out
}
