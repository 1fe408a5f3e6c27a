package ratelimit

import (
	"testing"
	"time"
)

func TestParseLimitSteadyRate(t *testing.T) {
	got, err := ParseLimit("100/s")
	if err != nil {
		t.Fatal(err)
	}
	want := Limit{Events: 100, Per: time.Second, Burst: 100}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestParseLimitBurst(t *testing.T) {
	got, err := ParseLimit("5/min burst 10")
	if err != nil {
		t.Fatal(err)
	}
	if got.Burst != 10 || got.Per != time.Minute {
		t.Fatalf("got %+v", got)
	}
}

func TestIntervalAndString(t *testing.T) {
	l := Limit{Events: 4, Per: time.Second, Burst: 4}
	if l.Interval() != 250*time.Millisecond {
		t.Fatalf("interval %v", l.Interval())
	}
	if l.String() != "4/s" {
		t.Fatalf("string %q", l.String())
	}
}
