package ratelimit

import (
	"testing"
	"time"
)

type fakeClock struct{ at time.Time }

func (c *fakeClock) now() time.Time { return c.at }

func TestAllowUpToBurstThenRefills(t *testing.T) {
	clock := &fakeClock{at: time.Unix(0, 0)}
	b := NewBucket(Limit{Events: 2, Per: time.Second, Burst: 2}, clock.now)
	if !b.Allow() || !b.Allow() {
		t.Fatal("a full bucket allows its burst")
	}
	if b.Allow() {
		t.Fatal("an empty bucket refuses")
	}
	clock.at = clock.at.Add(500 * time.Millisecond)
	if !b.Allow() {
		t.Fatal("half a second refills one token at 2/s")
	}
}
