package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"sort"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stableHeaders drops the headers that legitimately differ per response.
func stableHeaders(h http.Header) http.Header {
	out := h.Clone()
	out.Del("Date")
	return out
}

// quietLog discards what seeding logs.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))
