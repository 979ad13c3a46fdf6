package principal

// UserType is the principal type Kafka gives every authenticated or anonymous
// client ("User").
const UserType = "User"

// Principal is Kafka's KafkaPrincipal: a type and a name.
type Principal struct {
	Type string
	Name string
}

// Anonymous is the principal of a connection that did not authenticate.
var Anonymous = Principal{Type: UserType, Name: "ANONYMOUS"}

// User returns the User principal of the given name.
func User(name string) Principal { return Principal{Type: UserType, Name: name} }

// String formats the principal as Kafka does: "User:alice".
func (p Principal) String() string { return p.Type + ":" + p.Name }

// IsAnonymous reports whether p is User:ANONYMOUS.
func (p Principal) IsAnonymous() bool { return p == Anonymous }
