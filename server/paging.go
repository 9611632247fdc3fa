package server

import (
	"strconv"

	"github.com/facade-dev/facade"
)

// The service's paging habit for its own (non-Bamboo) lists: ?limit=N,
// 1 to maxPageLimit, with a per-list default; lists that can be long also
// take ?start=M (0 or more, an offset into a stable order) and say where the
// next page starts. Anything else is 400 before any look-up, naming the
// parameter and whether it was malformed or out of range.
const maxPageLimit = 100

// pageLimit parses ?limit=: "" means def; otherwise a canonical decimal
// between 1 and max.
func pageLimit(q string, def, max int) (int, error) {
	if q == "" {
		return def, nil
	}
	n, err := strconv.Atoi(q)
	switch {
	case err != nil || strconv.Itoa(n) != q:
		return 0, facade.Refuse(facade.ErrBadParameter, "limit", facade.ReasonMalformed)
	case n < 1 || n > max:
		return 0, facade.Refuse(facade.ErrBadParameter, "limit", facade.ReasonOutOfRange)
	}
	return n, nil
}

// pageStart parses ?start=: "" means 0; otherwise a canonical decimal of 0
// or more.
func pageStart(q string) (int, error) {
	if q == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(q)
	switch {
	case err != nil || strconv.Itoa(n) != q:
		return 0, facade.Refuse(facade.ErrBadParameter, "start", facade.ReasonMalformed)
	case n < 0:
		return 0, facade.Refuse(facade.ErrBadParameter, "start", facade.ReasonOutOfRange)
	}
	return n, nil
}
