#!/usr/bin/env bash
# Load harness: Facade on the production path next to a baseline that does
# the same job without it, alternating in the same run on the same machine.
#
#   bash bench/run.sh
#
# It starts (all on 127.0.0.1, in one mktemp directory, each stopped by its
# own process id when the script ends, however it ends):
#   - a private redis-server (no persistence) on a free port;
#   - bench/cmd/bambooserver: the Bamboo-compatible test server with the
#     demo data, PROJECTS generated projects of PLANS plans and a generated
#     ARTIFACT_MB artifact;
#   - `facade serve` with production settings: the default rate limit
#     (50/s per principal, burst 100), the default log level (info) writing
#     to a file, the default cache TTL, everything else default;
#   - nginx (proxy_cache of the upstream document; a static file the size of
#     facade's answer);
#   - bench/cmd/blobserver: plain net/http answering facade's list from
#     memory (what Go itself costs, under facade's own work);
#   - redis-benchmark against the same redis-server.
# It installs nothing: it lists what is missing and stops.
#
# Workloads (facade, then its baselines, round after round; medians):
#   transfer  POST /rs/transfer/from/A/to/B/amount/0.01, alternating A->B and
#             B->A  vs  redis-benchmark EVAL of a plain 4-command Lua transfer,
#             and vs redis-benchmark EVALSHA of facade's own transfer script
#             (unique transfer ids, two accounts of its own)
#   list      GET the filtered project list (expand=projects.project.plans),
#             warm  vs  nginx proxy_cache of the whole upstream document,
#             vs nginx serving a static file of the same size as facade's answer,
#             and vs blobserver answering the same bytes from memory
#   grade     GET /student/S/english/grade  vs  redis-benchmark GET
#   balance   GET /rs/account/A/balance     vs  redis-benchmark GET
#   artifact  a whole ARTIFACT_MB artifact through facade vs straight from the
#             test server and vs nginx proxy_pass (256 KiB buffers) in front
#             of it (curl, one stream), with facade's RSS growth; then four
#             concurrent downloads through facade, with its RSS growth
# Every facade request carries the token of the next of PRINCIPALS principals
# (wrk Lua script rotating tokens); all of them are members of one team that
# holds the grants. CPU per request comes from /proc (the server's process:
# facade, nginx's workers, redis-server).
#
# Settings (environment):
#   DURATION=10s      wrk duration of each measured run
#   CONNECTIONS=32    wrk and redis-benchmark connections
#   THREADS=2         wrk and redis-benchmark threads
#   ROUNDS=3          alternating rounds; the table shows medians
#   PRINCIPALS=2000   rotating principals (see bench/README.md: the default
#                     rate limit allows 50/s each)
#   PROJECTS=100 PLANS=5 ARTIFACT_MB=1024
#   ARTIFACT_RUNS=3   alternations of the artifact downloads in each round
#                     (the artifact row's ratio is the median over all)
#   WORKLOADS="transfer list grade balance artifact"
#   RB_FIRST=100000   redis-benchmark requests in its first (warm-up) run;
#                     later runs ask for DURATION's worth at the last rate
#   TRANSFER_BATCH=16 transfers per call in the redis-benchmark run of
#                     facade's script in batches
#   PERF=0            1: perf record facade during its last run of each
#                     workload (and the plain net/http server during its
#                     last list run) and print their top symbols and
#                     context switches per request
#   FACADE_ENV=""     extra settings for facade serve, e.g. "FACADE_RATE_LIMIT=0"
#   KEEP=0            1: keep the temp dir (configs, logs, bodies)
#   COMPARE=""        a git revision: also build facade as it was there, run
#                     it beside this tree's (same Redis, upstream, settings,
#                     tokens) and print a row per workload with this tree's
#                     figure over that revision's (the artifact download
#                     too): a change's before/after measured in one run
#   COMPARE_ENV=""    extra settings for the COMPARE instance only (after
#                     FACADE_ENV), e.g. COMPARE=HEAD COMPARE_ENV="GOGC=400"
#                     measures one setting against the default
set -euo pipefail

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-3}
PRINCIPALS=${PRINCIPALS:-2000}
PROJECTS=${PROJECTS:-100}
PLANS=${PLANS:-5}
ARTIFACT_MB=${ARTIFACT_MB:-1024}
ARTIFACT_RUNS=${ARTIFACT_RUNS:-3}
WORKLOADS=${WORKLOADS:-transfer list grade balance artifact}
RB_FIRST=${RB_FIRST:-100000}
TRANSFER_BATCH=${TRANSFER_BATCH:-16}
PERF=${PERF:-0}
FACADE_ENV=${FACADE_ENV:-}
KEEP=${KEEP:-0}
COMPARE=${COMPARE:-}
COMPARE_ENV=${COMPARE_ENV:-}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PATH=$PATH:/usr/sbin:/sbin # nginx lives in sbin, often off a user's PATH

list_path='/rest/api/latest/project?expand=projects.project.plans&max-results=100'
upstream_list_path='/rest/api/latest/project?expand=projects.project.plans&max-results=500'
artifact_path='/browse/B001-BUILD-1/artifact/shared/bench.img/bench.img'
acct_a=7001 acct_b=7002 student=bench-student
acct_c=7003 acct_d=7004 # redis-benchmark's, for facade's own script

log() { printf '%s\n' "$*" >&2; }
die() {
	log "bench: $*"
	exit 1
}

require_tools() {
	local t missing=()
	for t in go curl redis-server redis-cli redis-benchmark nginx wrk awk; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	[ "$PERF" = 1 ] && ! command -v perf >/dev/null && missing+=(perf)
	[ ${#missing[@]} -eq 0 ] && return
	die "missing on PATH: ${missing[*]} (Debian: apt-get install redis-tools redis-server nginx wrk linux-perf curl; Go from go.dev)"
}

# --- processes ----------------------------------------------------------------

tmp=''
pids=()

# cleanup stops the processes newest first, each before the next (facade
# drains before its Redis goes away).
cleanup() {
	local pid i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		pid=${pids[i]}
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ "$KEEP" = 1 ]; then
		log "kept $tmp"
	elif [ -n "$tmp" ]; then
		rm -rf "$tmp"
	fi
}

taken_ports=' '
# The ports free_port picks (it sets them by name).
redis_port='' facade_port='' compare_port='' nginx_port='' nginx_static_port='' nginx_artifact_port=''
free_port() { # VAR
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		case $taken_ports in *" $p "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			taken_ports+="$p "
			printf -v "$1" '%s' "$p"
			return
		fi
	done
	die "no free loopback port"
}

wait_for() { # what cmd...
	local what=$1
	shift
	for _ in $(seq 100); do
		"$@" >/dev/null 2>&1 && return
		sleep 0.1
	done
	die "$what did not come up (logs in $tmp)"
}

alive() { kill -0 "$1" 2>/dev/null || die "$2 exited (log: $(tail -5 "$3" 2>/dev/null))"; }

# --- set-up -------------------------------------------------------------------

build() {
	log "building facade and bambooserver"
	(cd "$repo" && go build -o "$tmp/facade" ./cmd/facade && go build -o "$tmp/bambooserver" ./bench/cmd/bambooserver &&
		go build -o "$tmp/blobserver" ./bench/cmd/blobserver)
	[ -n "$COMPARE" ] || return 0
	log "building facade at $COMPARE"
	mkdir "$tmp/compare-src"
	git -C "$repo" archive "$COMPARE" | tar -x -C "$tmp/compare-src" || die "COMPARE=$COMPARE: not a revision of $repo"
	(cd "$tmp/compare-src" && go build -o "$tmp/facade-compare" ./cmd/facade)
}

start_redis() {
	free_port redis_port
	mkdir "$tmp/redis"
	redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
		--dir "$tmp/redis" --logfile "$tmp/redis.log" --daemonize no &
	pids+=($!)
	redis_pid=$!
	wait_for redis-server redis-cli -p "$redis_port" ping
}

start_upstream() {
	upstream_token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	BAMBOO_TOKEN=$upstream_token "$tmp/bambooserver" -projects "$PROJECTS" -plans "$PLANS" \
		-artifact-size $((ARTIFACT_MB << 20)) >"$tmp/bambooserver.out" 2>"$tmp/bambooserver.log" &
	pids+=($!)
	upstream_pid=$!
	wait_for bambooserver test -s "$tmp/bambooserver.out"
	alive "$upstream_pid" bambooserver "$tmp/bambooserver.log"
	upstream_url=$(head -1 "$tmp/bambooserver.out")
	upstream_hostport=${upstream_url#http://}
}

# write_policy: PRINCIPALS members of team:bench; the team sees PROJ, the
# plan WEB-NIGHTLY, every 10th generated project whole and one plan of every
# 7th, B001 (the artifact), may transfer between and view the two bench
# accounts, and views the class the bench student is enrolled in (the
# principals are professors). Prints how many projects a member sees.
write_policy() {
	local i key visible=3
	cp "$repo/model.conf" "$tmp/model.conf"
	{
		echo '# bench/run.sh: the benchmark team'
		echo 'p, team:bench, project:PROJ, view'
		echo 'p, team:bench, plan:WEB-NIGHTLY, view'
		echo 'p, team:bench, project:B001, view'
		for ((i = 2; i <= PROJECTS; i++)); do
			printf -v key 'B%03d' "$i"
			if ((i % 10 == 0)); then
				echo "p, team:bench, project:$key, view"
				visible=$((visible + 1))
			elif ((i % 7 == 0)); then
				echo "p, team:bench, plan:$key-TEST, view"
				visible=$((visible + 1))
			fi
		done
		echo "p, team:bench, account:$acct_a, transfer"
		echo "p, team:bench, account:$acct_b, transfer"
		echo "p, team:bench, account:$acct_a, view_account"
		echo "p, team:bench, account:$acct_b, view_account"
		echo 'p, team:bench, class:bench-101, view'
		echo "g, student:$student, class:bench-101"
		for ((i = 1; i <= PRINCIPALS; i++)); do
			printf 'g, bench%04d, team:bench\n' "$i"
		done
	} >"$tmp/policy.csv"
	echo "$visible"
}

seed() {
	cat >"$tmp/seed.json" <<EOF
{"accounts": [
  {"id": "$acct_a", "owner": "bench", "currency": "EUR", "balance": "900000000.00"},
  {"id": "$acct_b", "owner": "bench", "currency": "EUR", "balance": "900000000.00"},
  {"id": "$acct_c", "owner": "bench", "currency": "EUR", "balance": "900000000.00"},
  {"id": "$acct_d", "owner": "bench", "currency": "EUR", "balance": "900000000.00"}],
 "grades": [{"student_id": "$student", "subject": "english", "grade": "B+"}]}
EOF
	"$tmp/facade" seed --file "$tmp/seed.json" >"$tmp/seed.out" 2>&1 || die "seed: $(cat "$tmp/seed.out")"
	# The baseline's keys: its own, beside facade's, on the same Redis.
	redis-cli -p "$redis_port" hset 'bench:{t}:a' balance 900000000000 >/dev/null
	redis-cli -p "$redis_port" hset 'bench:{t}:b' balance 900000000000 >/dev/null
	redis-cli -p "$redis_port" set 'bench:grade' '{"grade":"B+"}' >/dev/null
	own_script_sha=$(redis-cli -p "$redis_port" script load "$(cat "$repo/accounts/transfer.lua")")
}

start_facade() {
	free_port facade_port
	facade_url="http://127.0.0.1:$facade_port"
	jwt_secret=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
	export FACADE_MODEL="$tmp/model.conf" FACADE_POLICY="$tmp/policy.csv" \
		FACADE_REDIS_URL="redis://127.0.0.1:$redis_port/0"
	"$tmp/facade" policy check >"$tmp/policy-check.out" 2>&1 || die "policy check: $(cat "$tmp/policy-check.out")"
	seed
	launch_facade "$tmp/facade" "$facade_port" "$facade_url" "$tmp/facade.log" ""
	facade_pid=$launched_pid
	if [ -n "$COMPARE" ]; then
		free_port compare_port
		compare_url="http://127.0.0.1:$compare_port"
		launch_facade "$tmp/facade-compare" "$compare_port" "$compare_url" "$tmp/facade-compare.log" "$COMPARE_ENV"
		compare_pid=$launched_pid
	fi
	log "minting $PRINCIPALS tokens"
	seq -f 'bench%04g' "$PRINCIPALS" | FACADE_JWT_SECRET=$jwt_secret xargs -P 4 -I{} \
		"$tmp/facade" token --sub {} --role professor --ttl 3h >"$tmp/tokens"
	[ "$(wc -l <"$tmp/tokens")" -eq "$PRINCIPALS" ] || die "minted $(wc -l <"$tmp/tokens") tokens, want $PRINCIPALS"
	token1=$(head -1 "$tmp/tokens")
}

# launch_facade BINARY PORT URL LOG EXTRA_ENV: facade serve with the
# production settings; sets launched_pid.
launch_facade() {
	local bin=$1 port=$2 url=$3 logf=$4 extra=$5
	(
		cd "$tmp"
		export FACADE_ADDR="127.0.0.1:$port" FACADE_PUBLIC_URL="$url" \
			FACADE_UPSTREAM_URL="$upstream_url" FACADE_UPSTREAM_TOKEN="$upstream_token" \
			FACADE_JWT_SECRET="$jwt_secret"
		# Each is "NAME=value NAME=value": one export per word.
		local -a words=()
		[ -z "$FACADE_ENV" ] || read -ra words <<<"$FACADE_ENV"
		[ -z "$extra" ] || { read -ra more <<<"$extra"; words+=("${more[@]}"); }
		[ ${#words[@]} -eq 0 ] || export "${words[@]}"
		exec "$bin" serve
	) 2>"$logf" &
	pids+=($!)
	launched_pid=$!
	wait_for facade curl -fsS "$url/readyz"
	alive "$launched_pid" facade "$logf"
}

start_nginx() {
	free_port nginx_port
	free_port nginx_static_port
	free_port nginx_artifact_port
	local n="$tmp/nginx" user=''
	mkdir -p "$n/logs" "$n/static"
	if [ "$(id -u)" -eq 0 ]; then
		# Workers drop to nobody: let them reach their files in the temp dir.
		user='user nobody nogroup;'
		chmod 711 "$tmp"
		chmod 755 "$n" "$n/static"
	fi
	cat >"$n/nginx.conf" <<EOF
$user
daemon off;
worker_processes 2;
pid $n/nginx.pid;
error_log $n/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    # tcp_nopush stays off: with it, keep-alive answers on loopback stall.
    sendfile on;
    keepalive_requests 10000000;
    client_body_temp_path $n/client_body;
    proxy_temp_path $n/proxy_temp;
    fastcgi_temp_path $n/fastcgi_temp;
    uwsgi_temp_path $n/uwsgi_temp;
    scgi_temp_path $n/scgi_temp;
    proxy_cache_path $n/cache levels=1:2 keys_zone=bench:10m max_size=256m inactive=10m use_temp_path=off;
    upstream bamboo { server $upstream_hostport; keepalive 8; }

    # The whole upstream document facade caches, unauthenticated.
    server {
        listen 127.0.0.1:$nginx_port;
        location = /rest/api/latest/project {
            proxy_http_version 1.1;
            proxy_cache bench;
            proxy_cache_key \$request_uri;
            proxy_cache_valid 200 60s;
            proxy_cache_lock on;
            proxy_ignore_headers Cache-Control Expires Set-Cookie Vary;
            add_header X-Cache-Status \$upstream_cache_status;
            rewrite ^ $upstream_list_path? break;
            proxy_set_header Connection "";
            proxy_set_header Accept application/json;
            proxy_set_header Authorization "Bearer $upstream_token";
            proxy_pass http://bamboo;
        }
    }
    # The artifact passed through from the same upstream, 256 KiB buffers,
    # nothing spooled to disk.
    server {
        listen 127.0.0.1:$nginx_artifact_port;
        location / {
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Authorization "Bearer $upstream_token";
            proxy_buffer_size 256k;
            proxy_buffers 8 256k;
            proxy_busy_buffers_size 512k;
            proxy_max_temp_file_size 0;
            proxy_pass http://bamboo;
        }
    }
    # A static file with facade's answer (same size), from the page cache.
    server {
        listen 127.0.0.1:$nginx_static_port;
        root $n/static;
        default_type application/json;
    }
}
EOF
	cp "$tmp/facade.json" "$n/static/list.json"
	chmod 644 "$n/static/list.json"
	nginx -t -p "$n" -c "$n/nginx.conf" >"$n/logs/test.out" 2>&1 || die "nginx -t: $(cat "$n/logs/test.out")"
	nginx -p "$n" -c "$n/nginx.conf" 2>"$n/logs/stderr.log" &
	pids+=($!)
	nginx_pid=$!
	wait_for nginx curl -sS -o /dev/null "http://127.0.0.1:$nginx_port/"
	alive "$nginx_pid" nginx "$n/logs/error.log"
}

# --- checks -------------------------------------------------------------------

status_of() { # url file [curl args]
	local url=$1 file=$2
	shift 2
	curl -sS -o "$file" -D "$file.h" -w '%{http_code}' "$@" "$url"
}
header_of() { tr -d '\r' <"$1.h" | awk -F': ' -v h="$2" 'tolower($1) == h {print $2}'; }
has() { grep -qF -- "$2" "$1"; }

# warm_and_check asks every target once (twice for the caches) and checks
# what each one answers, so a figure is never that of an error page.
warm_and_check() {
	local visible=$1 auth=(-H "Authorization: Bearer $token1") s
	status_of "$facade_url$list_path" "$tmp/facade.json" "${auth[@]}" >/dev/null
	s=$(status_of "$facade_url$list_path" "$tmp/facade.json" "${auth[@]}")
	{ [ "$s" = 200 ] && [ "$(header_of "$tmp/facade.json" x-cache)" = HIT ]; } || die "facade list: $s $(header_of "$tmp/facade.json" x-cache), want 200 HIT"
	has "$tmp/facade.json" "\"projects\":{\"size\":$visible," || die "facade: projects.size is not $visible"
	has "$tmp/facade.json" '"key":"WEB-NIGHTLY"' || die "facade: granted plan WEB-NIGHTLY missing"
	for key in MOBILE B002 WEB-PR; do
		! has "$tmp/facade.json" "\"key\":\"$key\"" || die "facade: $key is visible to the team"
	done
	! has "$tmp/facade.json" "$upstream_hostport" || die "facade: upstream host leaked into links"
	s=$(status_of "$facade_url/student/$student/english/grade" "$tmp/grade.json" "${auth[@]}")
	{ [ "$s" = 200 ] && has "$tmp/grade.json" '"B+"'; } || die "facade grade: $s $(cat "$tmp/grade.json")"
	s=$(status_of "$facade_url/rs/account/$acct_a/balance" "$tmp/balance.json" "${auth[@]}")
	[ "$s" = 200 ] || die "facade balance: $s $(cat "$tmp/balance.json")"
	s=$(status_of "$facade_url/rs/transfer/from/$acct_a/to/$acct_b/amount/0.01" "$tmp/transfer.json" "${auth[@]}" -X POST -H 'X-XSRF-TOKEN: bench')
	[ "$s" = 201 ] || die "facade transfer: $s $(cat "$tmp/transfer.json")"
	s=$(status_of "$facade_url/rs/transfer/from/$acct_b/to/$acct_a/amount/0.01" "$tmp/transfer.json" "${auth[@]}" -X POST -H 'X-XSRF-TOKEN: bench')
	[ "$s" = 201 ] || die "facade transfer back: $s $(cat "$tmp/transfer.json")"
	if [ -n "$COMPARE" ]; then
		status_of "$compare_url$list_path" "$tmp/compare.json" "${auth[@]}" >/dev/null
		s=$(status_of "$compare_url$list_path" "$tmp/compare.json" "${auth[@]}")
		[ "$s" = 200 ] || die "facade at $COMPARE, list: $s"
	fi
	balances_before=$(balances)
}

start_blob() {
	"$tmp/blobserver" -file "$tmp/facade.json" >"$tmp/blobserver.out" 2>"$tmp/blobserver.log" &
	pids+=($!)
	blob_pid=$!
	wait_for blobserver test -s "$tmp/blobserver.out"
	alive "$blob_pid" blobserver "$tmp/blobserver.log"
	blob_url=$(head -1 "$tmp/blobserver.out")
	local s
	s=$(status_of "$blob_url/list.json" "$tmp/blob.json")
	{ [ "$s" = 200 ] && cmp -s "$tmp/blob.json" "$tmp/facade.json"; } || die "blobserver: $s or not facade's bytes"
}

check_nginx() {
	local s
	status_of "http://127.0.0.1:$nginx_port/rest/api/latest/project" "$tmp/nginx.json" >/dev/null
	s=$(status_of "http://127.0.0.1:$nginx_port/rest/api/latest/project" "$tmp/nginx.json")
	{ [ "$s" = 200 ] && [ "$(header_of "$tmp/nginx.json" x-cache-status)" = HIT ]; } || die "nginx proxy_cache: $s, want 200 HIT"
	has "$tmp/nginx.json" '"key":"MOBILE"' || die "nginx: not the unfiltered document"
	s=$(status_of "http://127.0.0.1:$nginx_static_port/list.json" "$tmp/static.json")
	{ [ "$s" = 200 ] && cmp -s "$tmp/static.json" "$tmp/facade.json"; } || die "nginx static: $s or not facade's bytes"
}

balances() {
	local a b
	a=$(curl -fsS -H "Authorization: Bearer $token1" "$facade_url/rs/account/$acct_a/balance")
	b=$(curl -fsS -H "Authorization: Bearer $token1" "$facade_url/rs/account/$acct_b/balance" 2>/dev/null || echo '?')
	echo "$a $b"
}

metric() { # regex: sum of facade's samples matching it
	curl -fsS "$facade_url/metrics" | awk -v re="$1" '$0 ~ re && $0 !~ /^#/ {s += $NF} END {printf "%d\n", s}'
}
statuses() { # one line: 2xx 429 other, over every route
	curl -fsS "$facade_url/metrics" | awk '/^facade_http_requests_total[{]/ {
		match($0, /status="[0-9]+"/); st = substr($0, RSTART + 8, 3)
		if (st ~ /^2/) ok += $NF; else if (st == "429") rl += $NF; else bad += $NF
	} END {printf "%d %d %d\n", ok, rl, bad}'
}

# --- load -----------------------------------------------------------------------

# The wrk script: every request carries the next principal's token (threads
# start at different principals) and takes the next of BENCH_PATHS in turn.
write_wrk_lua() {
	cat >"$tmp/rotate.lua" <<'EOF'
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local reqs, n, i = {}, 0, 0
function init(args)
  local tokens, paths = {}, {}
  local file = os.getenv("BENCH_TOKENS")
  if file and file ~= "" then
    for line in io.lines(file) do tokens[#tokens + 1] = line end
  else
    tokens[1] = ""
  end
  for p in string.gmatch(os.getenv("BENCH_PATHS"), "%S+") do paths[#paths + 1] = p end
  local method = os.getenv("BENCH_METHOD") or "GET"
  local body = nil
  if method == "POST" then body = "" end
  for t = 1, #tokens do
    for p = 1, #paths do
      local h = {}
      if tokens[t] ~= "" then h["Authorization"] = "Bearer " .. tokens[t] end
      if method == "POST" then h["X-XSRF-TOKEN"] = "bench" end
      reqs[#reqs + 1] = wrk.format(method, paths[p], h, body)
    end
  end
  n = #reqs
  i = (tid * 7919) % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d errors=%d non2xx=%d\n",
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
EOF
}

cpu_ticks() { # pid...: user+system ticks of the processes (all threads)
	local pid total=0 t
	for pid in "$@"; do
		# nginx's cache loader exits on its own: a process gone counts 0.
		t=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13}')
		[ -n "$t" ] || continue
		total=$((total + t))
	done
	echo "$total"
}
hz=$(getconf CLK_TCK)

# run_ns PID: CPU time the process has run, in ns (/proc/PID/schedstat).
run_ns() { awk '{print $1}' "/proc/$1/schedstat"; }

field() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" <<<" $1"; }

# record NAME LINE: one measured run; fields rps p50_us p99_us cpu_us r429 bad errors.
record() { echo "$2" >>"$tmp/res.$1"; }

# wrk_run NAME PID URL_BASE METHOD PATHS [tokens]: one wrk run against a
# server whose CPU is PID's (and, for nginx, its workers').
wrk_run() {
	local name=$1 base=$3 method=$4 paths=$5 tokens=${6:-} pidlist before after out perf_pid='' st0 st1 line
	read -ra pidlist <<<"$2"
	before=$(cpu_ticks "${pidlist[@]}")
	[ "$name" = "${name#f-}" ] || st0=$(statuses)
	if [ "$PERF" = 1 ] && { [ "$name" != "${name#f-}" ] || [ "$name" = b-list-go ]; } && [ "$round" = "$ROUNDS" ]; then
		perf record -F 499 -g -o "$tmp/perf.$name" -p "${pidlist[0]}" >/dev/null 2>&1 &
		perf_pid=$!
		switches "${pidlist[0]}" >"$tmp/cs0.$name"
	fi
	out=$(BENCH_TOKENS=$tokens BENCH_PATHS=$paths BENCH_METHOD=$method \
		wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 5s -s "$tmp/rotate.lua" "$base")
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
		switches "${pidlist[0]}" >"$tmp/cs1.$name"
	fi
	after=$(cpu_ticks "${pidlist[@]}")
	line=$(grep '^RESULT' <<<"$out") || die "$name: wrk printed no result: $out"
	local reqs dur r429=0 bad=0
	reqs=$(field "$line" requests)
	dur=$(field "$line" duration_us)
	if [ "$name" != "${name#f-}" ]; then
		st1=$(statuses)
		read -r _ r0 b0 <<<"$st0"
		read -r _ r1 b1 <<<"$st1"
		r429=$((r1 - r0))
		bad=$((b1 - b0))
	fi
	record "$name" "$(awk -v n="$reqs" -v d="$dur" -v p50="$(field "$line" p50_us)" -v p99="$(field "$line" p99_us)" \
		-v cpu=$((after - before)) -v hz="$hz" -v r429="$r429" -v bad="$bad" -v err="$(field "$line" errors)" \
		'BEGIN {printf "%.0f %d %d %.1f %d %d %d", n / d * 1e6, p50, p99, cpu / hz * 1e6 / n, r429, bad, err}')"
}

# rb_run NAME ARGS...: one redis-benchmark run of about DURATION (from the
# rate of the previous run of NAME); CPU is redis-server's.
# With RB_PER=k each command does k units of work (a batch of k
# transfers): req/s and CPU are given per unit, and the run asks for
# DURATION's worth of commands.
declare -A rb_n
rb_run() {
	local name=$1 per=${RB_PER:-1} n before after out
	n=${rb_n[$1]:-$((RB_FIRST / per))}
	shift
	before=$(run_ns "$redis_pid")
	out=$(redis-benchmark -p "$redis_port" -c "$CONNECTIONS" --threads "$THREADS" -n "$n" -r 100000000 --csv "$@" 2>&1)
	after=$(run_ns "$redis_pid")
	if grep -q '^Error' <<<"$out"; then
		# A script refused (its arguments out of step with accounts/transfer.lua,
		# say) would otherwise be timed as if it had run.
		die "redis-benchmark $name: $(grep -m1 '^Error' <<<"$out")"
	fi
	# "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
	record "$name" "$(tail -1 <<<"$out" | tr -d '"' | awk -F, -v n="$n" -v cpu=$((after - before)) -v per="$per" \
		'{printf "%.0f %d %d %.1f 0 0 0", $2 * per, $5 * 1000, $7 * 1000, cpu / 1000 / n / per}')"
	rb_n[$name]=$(tail -1 "$tmp/res.$name" | awk -v d="${DURATION%s}" -v per="$per" '{n = int($1 * d / per); print (n < 2000 ? 2000 : n)}')
}

# A plain transfer: check, debit, credit, append to a ledger.
lua_transfer="local b = tonumber(redis.call('HGET', KEYS[1], 'balance'))
if b < tonumber(ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'balance', -ARGV[1])
redis.call('HINCRBY', KEYS[2], 'balance', ARGV[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '10000', '*', 'id', ARGV[2], 'amount', ARGV[1])
return 1"

nginx_pids() { pgrep -P "$nginx_pid" | tr '\n' ' '; }

# compare_run NAME METHOD PATHS: the same wrk run against facade at COMPARE.
compare_run() {
	[ -z "$COMPARE" ] || wrk_run "c-$1" "$compare_pid" "$compare_url" "$2" "$3" "$tmp/tokens"
}

# script_stats: "usec calls" of every EVAL and EVALSHA redis-server has
# run (INFO commandstats), then the ledger's length.
script_stats() {
	redis-cli -p "$redis_port" info commandstats | tr -d '\r' |
		awk -F'[:,=]' '/^cmdstat_(eval|evalsha):/ {u += $5; c += $3} END {printf "%d %d ", u, c}'
	redis-cli -p "$redis_port" xlen 'facade:accounts:{money}:ledger'
}

# transfer_run NAME PID URL PATHS: a wrk run of transfers, plus what Redis
# spent on them, per transfer applied: redis-server's CPU time (all its
# work: sockets, parsing, scripts), the time inside script calls (INFO
# commandstats: elapsed time, so on a busy machine it also counts time
# Redis was not on a CPU, and it includes the rate limiter's settlement
# scripts), and script calls per transfer.
transfer_run() {
	local s0 s1 c0 c1
	s0=$(script_stats)
	c0=$(run_ns "$redis_pid")
	wrk_run "$1" "$2" "$3" POST "$4" "$tmp/tokens"
	c1=$(run_ns "$redis_pid")
	s1=$(script_stats)
	echo "$s0 $s1 $((c1 - c0))" | awk '{n = $6 - $3; if (n < 1) n = 1
		printf "%.1f %.1f %.3f\n", $7 / 1000 / n, ($4 - $1) / n, ($5 - $2) / n}' >>"$tmp/redis.$1"
}

round_transfer() {
	local paths="/rs/transfer/from/$acct_a/to/$acct_b/amount/0.01 /rs/transfer/from/$acct_b/to/$acct_a/amount/0.01"
	transfer_run f-transfer "$facade_pid" "$facade_url" "$paths"
	[ -z "$COMPARE" ] || transfer_run c-transfer "$compare_pid" "$compare_url" "$paths"
	rb_run b-transfer EVAL "$lua_transfer" 3 'bench:{t}:a' 'bench:{t}:b' 'bench:{t}:ledger' 1 __rand_int__
	# Facade's script as accounts.Store calls it for a batch of one: keys
	# and arguments as accounts/transfer.lua lists them, 0.01 in minor
	# units for exponents 0-3 ("" = too precise).
	local k='facade:accounts:{money}:'
	local own=("${k}account:$acct_c" "${k}account:$acct_d" "${k}history:$acct_c" "${k}history:$acct_d"
		"${k}lines:$acct_c" "${k}lines:$acct_d" "${k}transfer:__rand_int__")
	rb_run b-transfer-own EVALSHA "$own_script_sha" 9 "${k}ledger" "${k}statement-format" "${own[@]}" \
		86400 7 __rand_int__ "$acct_c" "$acct_d" '' '' 1 10 ''
	# The same in batches of TRANSFER_BATCH, as accounts.Store sends
	# concurrent transfers: what one Redis core (the money slot) can apply.
	local i keys=("${k}ledger" "${k}statement-format") args=(86400)
	for ((i = 0; i < TRANSFER_BATCH; i++)); do
		keys+=("${own[@]}")
		args+=(7 __rand_int__ "$acct_c" "$acct_d" '' '' 1 10 '')
	done
	RB_PER=$TRANSFER_BATCH rb_run b-transfer-batch EVALSHA "$own_script_sha" "${#keys[@]}" "${keys[@]}" "${args[@]}"
}
round_list() {
	wrk_run f-list "$facade_pid" "$facade_url" GET "$list_path" "$tmp/tokens"
	compare_run list GET "$list_path"
	wrk_run b-list-cache "$(nginx_pids)" "http://127.0.0.1:$nginx_port" GET /rest/api/latest/project
	wrk_run b-list-static "$(nginx_pids)" "http://127.0.0.1:$nginx_static_port" GET /list.json
	wrk_run b-list-go "$blob_pid" "$blob_url" GET /list.json
}
round_grade() {
	wrk_run f-grade "$facade_pid" "$facade_url" GET "/student/$student/english/grade" "$tmp/tokens"
	compare_run grade GET "/student/$student/english/grade"
	rb_run b-get-grade GET bench:grade
}
round_balance() {
	wrk_run f-balance "$facade_pid" "$facade_url" GET "/rs/account/$acct_a/balance" "$tmp/tokens"
	compare_run balance GET "/rs/account/$acct_a/balance"
	rb_run b-get-balance GET bench:grade
}

# rss_mark: facade's resident set now, in KiB, after resetting its peak
# (VmHWM) to it. rss_growth: how far the peak has risen since the mark.
# The kernel keeps the peak itself, so nothing samples (and competes with
# the download for the CPU) while it runs: a sampler forking awk every
# 50 ms ran during facade's downloads only.
rss_mark() {
	echo 5 >"/proc/$facade_pid/clear_refs"
	awk '/^VmRSS/ {print $2}' "/proc/$facade_pid/status"
}
rss_growth() { echo $(($(awk '/^VmHWM/ {print $2}' "/proc/$facade_pid/status") - $1)); }

# download NAME URL [curl args]: one whole artifact, with the CPU time of
# the server that sent it (facade, nginx's workers, the test server) and,
# for facade, its peak RSS growth during the download.
download() {
	local name=$1 url=$2 rss0 out pidlist=()
	shift 2
	case $name in
	f-artifact) pidlist=("$facade_pid") ;;
	c-artifact) pidlist=("$compare_pid") ;;
	b-artifact-nginx) read -ra pidlist <<<"$(nginx_pids)" ;;
	*) pidlist=("$upstream_pid") ;;
	esac
	local before after
	[ "$name" != f-artifact ] || rss0=$(rss_mark)
	before=$(cpu_ticks "${pidlist[@]}")
	out=$(curl -sS -o /dev/null -w '%{http_code} %{size_download} %{speed_download} %{time_starttransfer}' "$@" "$url")
	after=$(cpu_ticks "${pidlist[@]}")
	local rss_kib=0
	[ "$name" != f-artifact ] || rss_kib=$(rss_growth "$rss0")
	read -r code size speed ttfb <<<"$out"
	{ [ "$code" = 200 ] && [ "$size" = $((ARTIFACT_MB << 20)) ]; } || die "$name: HTTP $code, $size bytes"
	# fields: MB/s, ttfb us, -, server cpu us per MiB, facade rss KiB growth
	record "$name" "$(awk -v s="$speed" -v t="$ttfb" -v cpu=$((after - before)) -v hz="$hz" -v mb="$ARTIFACT_MB" -v rss="$rss_kib" \
		'BEGIN {printf "%.0f %d 0 %.1f %d 0 0", s / 1048576, t * 1e6, cpu / hz * 1e6 / mb, rss}')"
}
# round_artifact: ARTIFACT_RUNS alternations of the downloads (one
# download's rate moves by tens of percent from one to the next on a
# shared machine; each alternation gives the median one more ratio).
round_artifact() {
	local i
	for ((i = 0; i < ARTIFACT_RUNS; i++)); do
		download f-artifact "$facade_url$artifact_path" -H "Authorization: Bearer $token1"
		[ -z "$COMPARE" ] || download c-artifact "$compare_url$artifact_path" -H "Authorization: Bearer $token1"
		download b-artifact "$upstream_url$artifact_path" -H "Authorization: Bearer $upstream_token"
		download b-artifact-nginx "http://127.0.0.1:$nginx_artifact_port$artifact_path"
	done
}

# parallel_downloads: four whole artifacts through facade at once, once,
# with facade's peak RSS growth and the total rate.
parallel_downloads() {
	local rss0 i t0 t1 curls=()
	rss0=$(rss_mark)
	t0=$(date +%s.%N)
	for i in 1 2 3 4; do
		curl -sS -o /dev/null -w '%{http_code} %{size_download}' -H "Authorization: Bearer $token1" \
			"$facade_url$artifact_path" >"$tmp/par.$i" &
		curls+=($!)
	done
	wait "${curls[@]}" || true
	t1=$(date +%s.%N)
	for i in 1 2 3 4; do
		[ "$(cat "$tmp/par.$i")" = "200 $((ARTIFACT_MB << 20))" ] || die "parallel download $i: $(cat "$tmp/par.$i")"
	done
	parallel_line="4 concurrent ${ARTIFACT_MB} MiB downloads through facade: $(awk -v t0="$t0" -v t1="$t1" -v mb="$ARTIFACT_MB" \
		'BEGIN {printf "%.0f MiB/s in all", 4 * mb / (t1 - t0)}'), facade RSS +$(rss_growth "$rss0") KiB (peak)"
}

measure() {
	local w
	log "warm-up: ${DURATION} of each workload once"
	round=0
	for w in $WORKLOADS; do
		[ "$w" = artifact ] || "round_$w"
	done
	rm -f "$tmp"/res.* "$tmp"/redis.* # but keep rb_n: the warm-up calibrates redis-benchmark
	for ((round = 1; round <= ROUNDS; round++)); do
		for w in $WORKLOADS; do
			log "round $round/$ROUNDS: $w"
			"round_$w"
		done
	done
	if has_workload artifact; then
		log "four concurrent downloads"
		parallel_downloads
	fi
}

# --- report ---------------------------------------------------------------------

# median NAME: the run with the median first field (req/s or MB/s).
median() { sort -g "$tmp/res.$1" | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }
col() { awk -v i="$2" '{print $i}' <<<"$1"; }
all_runs() { awk '{printf "%s%s", sep, $1; sep = ","} END {print ""}' "$tmp/res.$1"; }

# round_ratios A B: facade/baseline of each round (runs of one round are
# minutes apart at most, so they share the machine's other load); then
# their median. Other jobs on a shared machine move each figure by tens of
# percent between rounds: the per-round ratio moves far less.
round_ratios() {
	paste -d' ' <(awk '{print $1}' "$tmp/res.$1") <(awk '{print $1}' "$tmp/res.$2") |
		awk '{printf "%s%.2f", sep, $1 / $2; sep = ","} END {print ""}'
}
median_ratio() { tr ',' '\n' <<<"$1" | sort -g | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }

row() { # label facade-name baseline-label baseline-name
	local f b rr
	f=$(median "$2")
	b=$(median "$4")
	rr=$(round_ratios "$2" "$4")
	awk -v l="$1" -v bl="$3" -v f="$f" -v b="$b" -v fr="$(all_runs "$2")" -v br="$(all_runs "$4")" \
		-v rr="$rr" -v r="$(median_ratio "$rr")" 'BEGIN {
		split(f, x, " "); split(b, y, " ")
		printf "%-22s %8d %6.2f %6.2f %6.1f %6d | %-26s %8d %6.2f %6.2f %6.1f | %5.2f   (rounds %s; facade %s; baseline %s)\n",
			l, x[1], x[2] / 1000, x[3] / 1000, x[4], x[5], bl, y[1], y[2] / 1000, y[3] / 1000, y[4], r, rr, fr, br
	}'
}

# redis_row NAME LABEL: Redis's work per transfer in NAME's runs (the
# median of each column; each round's CPU figure in brackets).
redis_row() {
	local f="$tmp/redis.$1"
	cmed() { awk -v i="$1" '{print $i}' "$f" | sort -g | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }
	printf 'Redis per transfer, %-22s CPU %5.1f us; inside scripts %5.1f us (commandstats: elapsed, incl. rate limiter); %.3f script calls   (rounds %s)\n' \
		"$2:" "$(cmed 1)" "$(cmed 2)" "$(cmed 3)" "$(awk '{printf "%s%s", sep, $1; sep = ","}' "$f")"
}

has_workload() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }

report() {
	echo
	echo "Facade on the production path vs baselines, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(uname -sr), load avg $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, redis-benchmark -c$CONNECTIONS --threads $THREADS; median of $ROUNDS alternating rounds"
	echo "facade: rate limit ${FACADE_ENV:-default 50/s per principal, burst 100}, info logs to a file, $PRINCIPALS principals rotating (one team)"
	echo "upstream: $((PROJECTS + 4)) projects, $PLANS plans each; a member sees $visible; $(nginx -v 2>&1 | sed 's/.*\///') nginx, redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
	echo
	printf '%-22s %8s %6s %6s %6s %6s | %-26s %8s %6s %6s %6s | %5s\n' workload 'req/s' p50ms p99ms 'cpuus' '429s' baseline 'req/s' p50ms p99ms cpuus ratio
	if has_workload transfer; then
		row 'transfer POST A<->B' f-transfer 'redis-benchmark Lua xfer' b-transfer
		row 'transfer POST A<->B' f-transfer "redis-benchmark facade's" b-transfer-own
		row 'transfer POST A<->B' f-transfer "facade's, batches of $TRANSFER_BATCH" b-transfer-batch
	fi
	if has_workload list; then
		row 'project list (warm)' f-list 'nginx proxy_cache (whole)' b-list-cache
		row 'project list (warm)' f-list 'nginx static (same size)' b-list-static
		row 'project list (warm)' f-list 'Go net/http (same bytes)' b-list-go
	fi
	has_workload grade && row 'grade read' f-grade 'redis-benchmark GET' b-get-grade
	has_workload balance && row 'balance read' f-balance 'redis-benchmark GET' b-get-balance
	if has_workload list; then
		has_workload grade && row 'grade read' f-grade 'facade project list' f-list
		has_workload balance && row 'balance read' f-balance 'facade project list' f-list
	fi
	if has_workload transfer; then
		redis_row f-transfer 'facade'
		[ -z "$COMPARE" ] || redis_row c-transfer "facade at $COMPARE"
		# Where this tree's build wrote statement lines: "stream" once set
		# (docs/operations.md, "Upgrading"; a fresh store sets it at its
		# first transfer); a revision before the streams writes its sorted
		# sets whatever it holds.
		echo "statement format key: $(redis-cli -p "$redis_port" get 'facade:accounts:{money}:statement-format')"
	fi
	if [ -n "$COMPARE" ]; then
		local w
		for w in transfer list grade balance; do
			has_workload "$w" && row "$w" "f-$w" "facade at $COMPARE${COMPARE_ENV:+ $COMPARE_ENV}" "c-$w"
		done
	fi
	if has_workload artifact; then
		local f b rr
		f=$(median f-artifact)
		b=$(median b-artifact)
		rr=$(round_ratios f-artifact b-artifact)
		# RSS: the highest peak of all facade's downloads, not the median run's.
		awk -v f="$f" -v b="$b" -v mb="$ARTIFACT_MB" -v rr="$rr" -v r="$(median_ratio "$rr")" \
			-v rss="$(awk '$5 > m {m = $5} END {print m + 0}' "$tmp/res.f-artifact")" 'BEGIN {split(f, x, " "); split(b, y, " ")
			printf "%-22s %5d MiB/s, facade RSS +%d KiB (peak), facade CPU %.0f us/MiB | direct from test server %5d MiB/s | %5.2f   (runs %s); test server CPU %.0f us/MiB\n",
				"artifact " mb " MiB", x[1], rss, x[4], y[1], r, rr, y[4]}'
		b=$(median b-artifact-nginx)
		rr=$(round_ratios f-artifact b-artifact-nginx)
		awk -v f="$f" -v b="$b" -v mb="$ARTIFACT_MB" -v rr="$rr" -v r="$(median_ratio "$rr")" 'BEGIN {split(f, x, " "); split(b, y, " ")
			printf "%-22s %5d MiB/s                                              | nginx proxy_pass (256 KiB)  %5d MiB/s | %5.2f   (runs %s); nginx CPU %.0f us/MiB\n",
				"artifact " mb " MiB", x[1], y[1], r, rr, y[4]}'
		if [ -n "$COMPARE" ]; then
			b=$(median c-artifact)
			rr=$(round_ratios f-artifact c-artifact)
			awk -v f="$f" -v b="$b" -v mb="$ARTIFACT_MB" -v rr="$rr" -v r="$(median_ratio "$rr")" -v at="$COMPARE${COMPARE_ENV:+ $COMPARE_ENV}" 'BEGIN {split(f, x, " "); split(b, y, " ")
				printf "%-22s %5d MiB/s, facade CPU %.0f us/MiB | facade at %s %5d MiB/s, CPU %.0f us/MiB | %5.2f   (runs %s)\n",
					"artifact " mb " MiB", x[1], x[4], at, y[1], y[4], r, rr}'
		fi
		echo "$parallel_line"
	fi
	echo
	echo "req/s and latency: medians over the rounds; ratio: the median of the rounds' facade/baseline ratios"
	echo "(each round's ratio, then each run's req/s, in brackets); cpuus: server CPU per request"
	echo "(facade process; nginx workers; redis-server), from /proc; 429s: facade's rate-limited answers in the median run"
	echo "files: $([ "$KEEP" = 1 ] && echo "$tmp" || echo 'KEEP=1 keeps them')"
}

verify() {
	# A few requests in flight when wrk stops see their client go away
	# (logged as failed, status 500): up to one per connection is that.
	local f line
	for f in "$tmp"/res.*; do
		while read -r line; do
			{ [ "$(col "$line" 6)" -le "$CONNECTIONS" ] && [ "$(col "$line" 7)" = 0 ]; } || die "${f##*.}: errors or non-2xx other than 429 in a run: $line"
		done <"$f"
	done
	# Exactly once: transfers of 0.01 both ways keep the sum of the two balances.
	local after
	after=$(balances)
	sum() { grep -o '"balance":"[0-9.]*"' <<<"$1" | tr -dc '0-9.\n' | awk '{s += $1} END {printf "%.2f\n", s}'; }
	[ "$(sum "$balances_before")" = "$(sum "$after")" ] || die "balances changed in sum: $balances_before -> $after"
	grep -q '"msg":"request"' "$tmp/facade.log" || die "facade wrote no info access lines: is the log level info?"
	# redis-benchmark does not count error replies: facade's script must
	# have moved money (it refuses with an error reply otherwise).
	if has_workload transfer; then
		local c
		c=$(redis-cli -p "$redis_port" hget "facade:accounts:{money}:account:$acct_c" balance)
		[ "$c" -lt 90000000000 ] || die "redis-benchmark's runs of facade's script moved no money (balance $c)"
	fi
}

# switches PID: the context switches of all of PID's threads so far,
# voluntary and not (a thread woken to hand work to another costs the
# kernel's scheduler on both sides).
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2} END {print v + 0, n + 0}'
}

perf_report() {
	[ "$PERF" = 1 ] || return 0
	local f name reqs
	for f in "$tmp"/perf.*; do
		name=${f##*/perf.}
		reqs=$(awk '{print $1 * d}' d="${DURATION%s}" "$tmp/res.$name" 2>/dev/null | tail -1)
		echo
		echo "perf: $name (${name#f-} through facade; b-list-go is plain net/http), top symbols by self time"
		if [ -f "$tmp/cs0.$name" ] && [ -n "$reqs" ]; then
			paste "$tmp/cs0.$name" "$tmp/cs1.$name" | awk -v n="$reqs" \
				'{printf "context switches per request: %.2f voluntary, %.2f involuntary (all threads, over the run)\n", ($3 - $1) / n, ($4 - $2) / n}'
		fi
		perf report -i "$f" --no-children --sort symbol --stdio 2>/dev/null |
			sed -E 's/ +- +- *$//; s/ {2,}/ /g' | awk '/^ ?[0-9.]+%/ && ++n <= 25'
	done
}

main() {
	require_tools
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/facade-bench.XXXXXX")
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	build
	start_redis
	start_upstream
	visible=$(write_policy)
	start_facade
	warm_and_check "$visible"
	start_nginx
	check_nginx
	start_blob
	write_wrk_lua
	measure
	verify
	report
	perf_report
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
