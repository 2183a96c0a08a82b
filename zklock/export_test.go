package zklock

// BusyCreates makes c count one more create in flight until done is called,
// so that its acquires take the path of many concurrent creates on one
// session (see createAndList) however the test schedules them.
func BusyCreates(c *Client) (done func()) {
	c.creating.Add(1)
	return func() { c.creating.Add(-1) }
}
