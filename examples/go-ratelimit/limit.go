// Package ratelimit is a token-bucket rate limiter with a clock that tests can drive.
package ratelimit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit is a steady rate of events and the burst allowed on top of it.
type Limit struct {
	Events int
	Per    time.Duration
	Burst  int
}

// ErrBadLimit is returned for a limit ParseLimit cannot read.
var ErrBadLimit = errors.New("ratelimit: bad limit")

var units = map[string]time.Duration{
	"s":   time.Second,
	"sec": time.Second,
	"m":   time.Minute,
	"min": time.Minute,
	"h":   time.Hour,
}

// ParseLimit reads "EVENTS/UNIT" (e.g. "100/s", "5/min"), with an optional burst: "100/s burst 20".
func ParseLimit(text string) (Limit, error) {
	fields := strings.Fields(text)
	if len(fields) != 1 && len(fields) != 3 {
		return Limit{}, fmt.Errorf("%w: %q", ErrBadLimit, text)
	}
	rate, unit, ok := strings.Cut(fields[0], "/")
	if !ok {
		return Limit{}, fmt.Errorf("%w: %q has no '/'", ErrBadLimit, text)
	}
	events, err := strconv.Atoi(rate)
	if err != nil || events <= 0 {
		return Limit{}, fmt.Errorf("%w: events %q", ErrBadLimit, rate)
	}
	per, known := units[unit]
	if !known {
		return Limit{}, fmt.Errorf("%w: unit %q", ErrBadLimit, unit)
	}
	limit := Limit{Events: events, Per: per, Burst: events}
	if len(fields) == 3 {
		if fields[1] != "burst" {
			return Limit{}, fmt.Errorf("%w: expected 'burst', got %q", ErrBadLimit, fields[1])
		}
		burst, err := strconv.Atoi(fields[2])
		if err != nil || burst < 1 {
			return Limit{}, fmt.Errorf("%w: burst %q", ErrBadLimit, fields[2])
		}
		limit.Burst = burst
	}
	return limit, nil
}

// Interval is the time between two events at the steady rate.
func (l Limit) Interval() time.Duration {
	return l.Per / time.Duration(l.Events)
}

// String writes the limit back in ParseLimit's form.
func (l Limit) String() string {
	unit := "s"
	switch l.Per {
	case time.Minute:
		unit = "min"
	case time.Hour:
		unit = "h"
	}
	if l.Burst != l.Events {
		return fmt.Sprintf("%d/%s burst %d", l.Events, unit, l.Burst)
	}
	return fmt.Sprintf("%d/%s", l.Events, unit)
}
