package ratelimit

import (
	"sync"
	"time"
)

// Clock tells the time; tests pass a fake one.
type Clock func() time.Time

// Bucket hands out tokens at a Limit's rate, up to its burst.
type Bucket struct {
	mu     sync.Mutex
	limit  Limit
	now    Clock
	tokens float64
	last   time.Time
}

// NewBucket starts full.
func NewBucket(limit Limit, now Clock) *Bucket {
	if now == nil {
		now = time.Now
	}
	return &Bucket{limit: limit, now: now, tokens: float64(limit.Burst), last: now()}
}

func (b *Bucket) refill(at time.Time) {
	elapsed := at.Sub(b.last)
	if elapsed <= 0 {
		return
	}
	b.tokens += float64(elapsed) / float64(b.limit.Interval())
	if b.tokens > float64(b.limit.Burst) {
		b.tokens = float64(b.limit.Burst)
	}
	b.last = at
}

// Allow takes a token if one is there.
func (b *Bucket) Allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(b.now())
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Reserve takes a token now or later and says how long to wait for it.
func (b *Bucket) Reserve() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(b.now())
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens * float64(b.limit.Interval()))
}

// Tokens is how many tokens are there now.
func (b *Bucket) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(b.now())
	return b.tokens
}
