package zkutil

// PendingCallbacks is the length of c's dispatcher queue, for the test that
// it stays bounded while a callback is stuck.
func PendingCallbacks(c *Client) int {
	d := c.dispatch
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.mu.pending)
}
