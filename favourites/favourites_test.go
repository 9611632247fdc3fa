package favourites

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// TestAChangeIsSeenAtOnceHereAndWithinFreshElsewhere: two instances on one
// Redis. The one that marks sees it at once; the other within Fresh.
func TestAChangeIsSeenAtOnceHereAndWithinFreshElsewhere(t *testing.T) {
	rdb := testredis.Client(t)
	clock := testclock.New()
	a, b := New(rdb, Config{Now: clock.Now}), New(rdb, Config{Now: clock.Now})
	ctx := context.Background()
	carol := facade.Principal{ID: "carol"}
	for _, s := range []*Store{a, b} { // both hold a copy of the empty set
		if plans, err := s.Plans(ctx, carol); err != nil || len(plans) != 0 {
			t.Fatalf("before: %v %v", plans, err)
		}
	}
	if err := a.Mark(ctx, carol, "PROJ-CORE"); err != nil {
		t.Fatal(err)
	}
	if plans, _ := a.Plans(ctx, carol); !plans["PROJ-CORE"] {
		t.Error("the instance that marked does not see it")
	}
	clock.Advance(DefaultFresh + 1)
	if plans, _ := b.Plans(ctx, carol); !plans["PROJ-CORE"] {
		t.Error("another instance does not see it after Fresh")
	}
	if err := b.Unmark(ctx, carol, "PROJ-CORE"); err != nil {
		t.Fatal(err)
	}
	if plans, _ := b.Plans(ctx, carol); plans["PROJ-CORE"] {
		t.Error("the instance that unmarked still sees it")
	}
}

// TestPeopleAreKeptApart: one person's favourites are nobody else's,
// whatever characters their IDs hold.
func TestPeopleAreKeptApart(t *testing.T) {
	s := New(testredis.Client(t), Config{Fresh: -1})
	ctx := context.Background()
	for _, id := range []string{"carol", "carol}", "{carol}", "%7Bcarol%7D"} {
		if err := s.Mark(ctx, facade.Principal{ID: id}, "PROJ-"+fmt.Sprint(len(id))); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"carol", "carol}", "{carol}", "%7Bcarol%7D"} {
		plans, _ := s.Plans(ctx, facade.Principal{ID: id})
		if len(plans) != 1 || !plans["PROJ-"+fmt.Sprint(len(id))] {
			t.Errorf("%q keeps %v", id, plans)
		}
	}
}

func TestAPersonKeepsAtMostMaxPerPerson(t *testing.T) {
	s := New(testredis.Client(t), Config{})
	ctx := context.Background()
	p := facade.Principal{ID: "carol"}
	for i := range MaxPerPerson {
		if err := s.Mark(ctx, p, fmt.Sprintf("PROJ-P%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Mark(ctx, p, "PROJ-ONEMORE"); !errors.Is(err, facade.ErrFavouritesFull) {
		t.Errorf("one more: %v, want favourites_full", err)
	}
	if err := s.Mark(ctx, p, "PROJ-P1"); err != nil {
		t.Errorf("one already kept: %v", err)
	}
}

// TestAChangeDuringAReadIsNotHiddenByIt: a read that began before this
// instance's own Mark, and ends after it, does not keep the set it read
// over the change: the person's next list shows the star at once, not a
// second later (when a second click would unmark it).
func TestAChangeDuringAReadIsNotHiddenByIt(t *testing.T) {
	rdb := testredis.Client(t)
	clock := testclock.New()
	s := New(rdb, Config{Now: clock.Now})
	carol := facade.Principal{ID: "carol"}
	// The star is clicked after the read has answered, before its caller
	// kept the set.
	var once sync.Once
	var markErr error
	testredis.AfterCommand(rdb, "smembers", "", func(ctx context.Context) {
		once.Do(func() { markErr = s.Mark(ctx, carol, "PROJ-CORE") })
	})
	ctx := context.Background()
	if plans, err := s.Plans(ctx, carol); err != nil || plans["PROJ-CORE"] {
		t.Fatalf("the read that began before the mark: %v %v", plans, err)
	}
	if markErr != nil {
		t.Fatal(markErr)
	}
	if plans, _ := s.Plans(ctx, carol); !plans["PROJ-CORE"] {
		t.Error("after the mark, this instance answers the set read before it")
	}
}
