#!/usr/bin/env bash
# How many of the service's own files one request runs code in: a
# transfer and a grade change, each sent once to warm up and then once
# measured, through the whole server (server_test's env: every middleware,
# a real redis-server).
#
#   bash bench/files-crossed.sh [REV...]     # default: HEAD f980b4f
#
# For each revision it checks the tree out into a temporary worktree, adds
# one test (below) to its server package, builds it with coverage over the
# production packages (atomic mode: counts) and runs it twice per request:
# once with the warm-up request only, once with the measured one after it.
# A file counts when a block of it ran more often in the second run (go
# test's coverage counters cannot be cleared mid-run in a test binary).
# Test kits, bambootest, the demo's identity provider and the tools are
# not counted. Work of the service's background goroutines that falls in
# the run (the log's flush, the limiter's settle) may add a file, in every
# revision alike. Nothing in the repository changes.
set -euo pipefail
cd "$(dirname "$0")/.."
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(HEAD f980b4f)
for cmd in go git redis-server; do
	command -v "$cmd" >/dev/null || { echo "files-crossed: $cmd is missing" >&2; exit 1; }
done

tmp=$(mktemp -d)
cleanup() {
	for d in "$tmp"/tree-*; do [ -d "$d" ] && git worktree remove --force "$d" >/dev/null 2>&1; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck disable=SC2016 # Go source, not shell: nothing in it expands
measure_test='package server_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestFilesCrossedMeasure(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice, bob := token(t, "alice", "customer"), token(t, "bob", "professor")
	send := func(method, path, body, tok, ifMatch string, want int) {
		t.Helper()
		r, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("X-XSRF-TOKEN", "t0k3n")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		if ifMatch != "" {
			r.Header.Set("If-Match", ifMatch)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d", method, path, res.StatusCode, want)
		}
	}
	measured := os.Getenv("FILES_CROSSED_MEASURE") == "1"
	grade := "/student/ghost/english/grade"
	switch os.Getenv("FILES_CROSSED_KIND") {
	case "transfer":
		send("POST", "/rs/transfer/from/1001/to/2002/amount/1.00", "", alice, "", 201)
		if measured {
			send("POST", "/rs/transfer/from/1001/to/2002/amount/1.00", "", alice, "", 201)
		}
	case "grade-change":
		send("POST", grade, `{"grade":"B+"}`, bob, "", 201)
		send("PUT", grade, `{"grade":"A"}`, bob, `"1"`, 200)
		if measured {
			send("PUT", grade, `{"grade":"C"}`, bob, `"2"`, 200)
		}
	default:
		t.Fatal("FILES_CROSSED_KIND: transfer or grade-change")
	}
}
'

printf '%-12s %-14s %s\n' revision request files
for rev in "${revs[@]}"; do
	tree="$tmp/tree-$rev"
	git worktree add --detach --force "$tree" "$rev" >/dev/null 2>&1
	printf '%s' "$measure_test" >"$tree/server/zz_files_crossed_test.go"
	(
		cd "$tree"
		pkgs=$(go list ./... | grep -v -e /internal/testkit -e /bambootest -e /demoidp -e /cmd/ -e /bench/ -e /tools/ -e /internal/policytest | paste -sd, -)
		go test -c -o "$tmp/server-$rev.test" -cover -covermode=atomic -coverpkg="$pkgs" ./server 2>"$tmp/build-$rev.log" ||
			{ cat "$tmp/build-$rev.log" >&2; exit 1; }
	)
	for kind in transfer grade-change; do
		for m in 0 1; do
			(cd "$tree/server" && FILES_CROSSED_KIND=$kind FILES_CROSSED_MEASURE=$m "$tmp/server-$rev.test" \
				-test.run '^TestFilesCrossedMeasure$' -test.coverprofile="$tmp/$rev-$kind-$m.out" >"$tmp/run.log" 2>&1) ||
				{ cat "$tmp/run.log" >&2; exit 1; }
		done
		# "file:start,end stmts count" lines: a file counts when one of its
		# blocks ran more often with the measured request than without.
		files=$(awk 'FNR == 1 { next } NR == FNR { base[$1] += $NF; next } { now[$1] += $NF }
			END { for (b in now) if (now[b] > base[b]) { f = b; sub(/:.*/, "", f); print f } }' \
			"$tmp/$rev-$kind-0.out" "$tmp/$rev-$kind-1.out" | sort -u)
		printf '%-12s %-14s %s\n' "$rev" "$kind" "$(printf '%s\n' "$files" | grep -c .)"
		if [ -n "${VERBOSE:-}" ]; then printf '%s\n' "$files" | sed 's/^/    /'; fi
	done
done
