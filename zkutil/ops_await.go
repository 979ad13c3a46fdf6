package zkutil

import (
	"context"
	"fmt"
	"time"
)

// AwaitDeleted blocks until path does not exist or ctx ends. It arms an
// exists watch first and then re-reads, so a deletion between the two is
// never missed; it does not poll (a failed read is retried after 200 ms). It returns nil once path is gone, and
// ctx's error (wrapped with the path) if ctx ends first. Connection errors
// while re-reading are retried by the next watch event or end with ctx.
//
// A broker uses it to wait out the ephemeral /brokers/ids/<id> of its own
// previous process, which ZooKeeper deletes only when that process's
// session expires.
func (c *Client) AwaitDeleted(ctx context.Context, path string) error {
	changed := make(chan struct{}, 1)
	cancel := c.WatchExists(path, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	for {
		ok, _, err := c.Exists(path)
		if err == nil && !ok {
			return nil
		}
		var retry <-chan time.Time
		var t *time.Timer
		if err != nil {
			// The watch may not fire for a read that failed; try again soon.
			c.log.WithError(err).WithField("path", path).Debug("exists check failed while waiting for deletion")
			t = time.NewTimer(200 * time.Millisecond)
			retry = t.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-retry:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("zkutil: waiting for %s to be deleted: %w", path, ctx.Err())
		}
	}
}
