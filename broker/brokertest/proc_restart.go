package brokertest

// Restarting a broker at once, without waiting out its old registration.

import (
	"errors"
	"fmt"
	"time"

	"samsa/zkutil"
)

// StartNow starts killed broker i again at once, while its old
// /brokers/ids/<id> may still be held by the dead process's session, and
// waits up to timeout for a registration by a new session (an epoch other
// than the one held before) and for the broker to serve Metadata. The
// process must stay up throughout: a broker that exits instead of waiting
// for the old registration fails the test. It returns the old and new
// broker epochs (the old one is 0 if there was no registration).
func (c *ProcCluster) StartNow(i int, timeout time.Duration) (oldEpoch, newEpoch int64) {
	c.t.Helper()
	if c.Running(i) {
		c.t.Fatalf("brokertest: broker %d is running", c.procs[i].ID)
	}
	p := c.procs[i]
	if info, err := c.zk.GetBroker(p.ID); err == nil {
		oldEpoch = info.Epoch
	} else if !errors.Is(err, zkutil.ErrNoNode) {
		c.t.Fatalf("brokertest: read broker %d: %v", p.ID, err)
	}
	c.spawn(i)
	WaitFor(c.t, timeout, func() error {
		if !c.Running(i) {
			return fmt.Errorf("broker %d exited: %s", p.ID, c.logTail(i, 2000))
		}
		info, err := c.zk.GetBroker(p.ID)
		if err != nil {
			return err
		}
		if info.Epoch == oldEpoch {
			return fmt.Errorf("broker %d: still the old registration (epoch %d)", p.ID, oldEpoch)
		}
		newEpoch = info.Epoch
		return nil
	})
	c.waitRegistered(i)
	c.waitServing(i, 1)
	return oldEpoch, newEpoch
}
