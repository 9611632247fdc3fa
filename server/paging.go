package server

import (
	"strconv"

	"github.com/facade-dev/facade"
)

// The service's paging habit for its own (non-Bamboo) lists: ?limit=N,
// 1 to maxPageLimit, with a per-list default; lists that can be long also
// take ?start=M (0 or more, an offset into a stable order) and say where the
// next page starts. Anything else is 400 before any look-up.
const maxPageLimit = 100

// pageLimit parses ?limit=: "" means def; otherwise a canonical decimal
// between 1 and max.
func pageLimit(q string, def, max int) (int, error) {
	if q == "" {
		return def, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > max || strconv.Itoa(n) != q {
		return 0, facade.ErrBadParameter
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
	if err != nil || n < 0 || strconv.Itoa(n) != q {
		return 0, facade.ErrBadParameter
	}
	return n, nil
}
