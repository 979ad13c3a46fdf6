package txn

// State is a transaction's state, with Kafka's byte values (the
// transaction_status field of the __transaction_state value).
type State int8

// Kafka 2.8's TransactionState values (TransactionMetadata.scala).
const (
	Empty             State = 0
	Ongoing           State = 1
	PrepareCommit     State = 2
	PrepareAbort      State = 3
	CompleteCommit    State = 4
	CompleteAbort     State = 5
	Dead              State = 6 // in memory only, while the tombstone is written
	PrepareEpochFence State = 7 // in memory only (pending); logged as PrepareAbort
)

// noState marks "no pending transition".
const noState State = -1

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
	"CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String returns Kafka's name of s, as DescribeTransactions and
// ListTransactions report it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// ParseState returns the state named name (Kafka's spelling), or false.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return noState, false
}

// validPrevious is Kafka 2.8's TransactionState.validPreviousStates.
var validPrevious = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteCommit, CompleteAbort},
	PrepareEpochFence: {Ongoing},
}

// ValidTransition reports whether a transaction may move from one state
// to another (Kafka's TransactionMetadata.isValidTransition).
func ValidTransition(from, to State) bool {
	for _, s := range validPrevious[to] {
		if s == from {
			return true
		}
	}
	return false
}

// expirable reports whether an id in state s may be expired
// (transactional.id.expiration.ms): no transaction is open or finishing.
func expirable(s State) bool { return s == Empty || s == CompleteCommit || s == CompleteAbort }

// complete reports whether s is a state with no transaction in progress.
func complete(s State) bool { return expirable(s) }
