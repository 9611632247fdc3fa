#!/usr/bin/env bash
# Redis's instructions per transfer, counted by valgrind's callgrind: a
# figure that does not move with the machine's load (bench/run.sh's CPU
# per transfer does, by 2x and more on a busy machine).
#
#   bash bench/callgrind-transfer.sh [REV...]     # default: HEAD f980b4f 7685f77
#
# For each revision it checks the tree out into a temporary worktree and
# runs that tree's own BenchmarkTransferScriptDirect/no-key (32 goroutines
# calling accounts.Store, batched as the Store batches them) twice, with
# N1 and N2 transfers, against a redis-server run under callgrind. The
# difference of the two totals over N2-N1 is what one transfer costs Redis
# (start-up and opening the accounts cancel out). Under valgrind Redis is
# about 50x slower, so batches are as large as the Store makes them: a
# lower bound of the per-call share, the same for every revision.
#
# The test kit kills its redis-server with SIGKILL (as a crash would);
# callgrind writes its counts only on a normal exit, so the temporary
# copy's Stop sends SIGTERM instead. Nothing in the repository changes.
#
# 7685f77 is the tree before the statement became a sorted set (419106a),
# f980b4f the tree with the sorted set, when the issue that brought the
# stream was filed.
set -euo pipefail
cd "$(dirname "$0")/.."
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(HEAD f980b4f 7685f77)
N1=${N1:-300} N2=${N2:-1300}
for cmd in valgrind redis-server go git; do
	command -v "$cmd" >/dev/null || { echo "callgrind-transfer: $cmd is missing" >&2; exit 1; }
done

tmp=$(mktemp -d)
cleanup() {
	for d in "$tmp"/tree-*; do [ -d "$d" ] && git worktree remove --force "$d" >/dev/null 2>&1; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# The callgrind'd redis-server the test kit finds first on PATH; exec keeps
# the process id the kit checks.
mkdir -p "$tmp/shim"
cat >"$tmp/shim/redis-server" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file="\$CG_OUT.%p" $(command -v redis-server) "\$@"
EOF
chmod +x "$tmp/shim/redis-server"

# total DIR NAME N: instructions Redis ran for the benchmark with N transfers.
total() {
	local dir=$1 out="$tmp/cg-$2-$3"
	(cd "$dir" && CG_OUT=$out PATH="$tmp/shim:$PATH" go test -run '^$' \
		-bench 'TransferScriptDirect/no-key' -benchtime "${3}x" -count 1 ./accounts >"$out.log" 2>&1) ||
		{ echo "callgrind-transfer: the benchmark failed at $2:" >&2; tail "$out.log" >&2; exit 1; }
	sleep 1
	awk '/^summary:/ {s += $2} END {print s}' "$out".[0-9]*
}

printf '%-10s %14s %14s %18s\n' revision "N=$N1" "N=$N2" 'instructions/xfer'
for rev in "${revs[@]}"; do
	sha=$(git rev-parse --short "$rev")
	dir="$tmp/tree-$sha"
	git worktree add -q --detach "$dir" "$sha"
	kit=$(grep -rl 'cmd.Process.Kill()' "$dir"/internal --include=testredis.go | head -1)
	sed -i 's/_ = cmd.Process.Kill()/_ = cmd.Process.Signal(syscall.SIGTERM)/' "$kit"
	grep -q '"syscall"' "$kit" || sed -i '0,/^import (/s//import (\n\t"syscall"/' "$kit"
	a=$(total "$dir" "$sha" "$N1")
	b=$(total "$dir" "$sha" "$N2")
	awk -v s="$sha" -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" \
		'BEGIN {printf "%-10s %14d %14d %18.0f\n", s, a, b, (b - a) / (n2 - n1)}'
done
