#!/usr/bin/env bash
# Load harness: the warm, filtered project list of Facade against nginx
# proxy_cache serving the same upstream document, in the same run, on
# loopback. Goal (issue): Facade at least half nginx's throughput.
#
#   bash bench/projects.sh
#
# Everything it starts (redis-server, the Bamboo-compatible upstream,
# facade serve, nginx) listens on 127.0.0.1, lives in one mktemp directory
# and is stopped, by its own process id, when the script ends, however it
# ends. Settings (environment):
#
#   DURATION=10s     wrk duration of each measured run
#   CONNECTIONS=32   wrk connections (concurrent callers)
#   THREADS=2        wrk threads
#   WARMUP=2s        wrk run before the measured ones (not reported)
#   ROUNDS=1         measured runs per target, interleaved; the median counts
#   PROJECTS=300     generated upstream projects (plus the demo's four)
#   PLANS=4          plans per generated project
#   TARGETS="nginx-upstream nginx-same facade healthz"   what to measure (facade is always included)
#   PERF=0           1: perf record facade during its run, print the top symbols
#   KEEP=0           1: keep the temp dir (configs, logs, bodies) for a look
#
# Targets, each a GET with keep-alive:
#   nginx-upstream  nginx proxy_cache holding the upstream document facade
#                   caches (every project, plans expanded, unfiltered)
#   nginx-same      nginx proxy_cache holding facade's own filtered answer:
#                   the same bytes facade sends, so per-request cost compares
#   facade          GET /rest/api/latest/project?expand=projects.project.plans
#                   with the principal's token, warm (view cached in process)
#   healthz         facade /healthz: the floor of one request on this stack
set -euo pipefail

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
WARMUP=${WARMUP:-2s}
ROUNDS=${ROUNDS:-1}
PROJECTS=${PROJECTS:-300}
PLANS=${PLANS:-4}
TARGETS=${TARGETS:-nginx-upstream nginx-same facade healthz}
PERF=${PERF:-0}
KEEP=${KEEP:-0}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PATH=$PATH:/usr/sbin:/sbin # nginx lives in sbin, often off a user's PATH

# The facade request: the whole filtered list fits one page of 100 (the
# principal sees about 70 of 304 projects with the default sizes).
project_path='/rest/api/latest/project?expand=projects.project.plans&max-results=100'
# What facade itself asks upstream for (proxy/projects.go, one page of 500).
upstream_path='/rest/api/latest/project?expand=projects.project.plans&max-results=500'

log() { printf '%s\n' "$*" >&2; }
die() { log "bench: $*"; exit 1; }

# --- tools ------------------------------------------------------------------

install_missing() {
	local missing=()
	command -v nginx >/dev/null || missing+=(nginx)
	command -v wrk >/dev/null || missing+=(wrk)
	[ "$PERF" = 1 ] && ! command -v perf >/dev/null && missing+=(linux-perf)
	[ ${#missing[@]} -eq 0 ] && return
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	log "installing ${missing[*]} from Debian's packages"
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

require_tools() {
	local t
	for t in redis-server go curl nginx wrk; do
		command -v "$t" >/dev/null || die "$t is required on PATH"
	done
}

# --- processes ----------------------------------------------------------------

tmp=''
pids=()
redis_port='' facade_port='' nginx_port='' nginx_same_port='' # set by free_port

cleanup() {
	local pid i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do
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

# free_port VAR sets VAR to a loopback port nothing listens on (and that
# no earlier call handed out).
taken_ports=' '
free_port() {
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

# wait_for runs a command until it succeeds, for at most 10 s.
wait_for() {
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
	(cd "$repo" && go build -o "$tmp/facade" ./cmd/facade && go build -o "$tmp/bambooserver" ./bench/cmd/bambooserver)
}

start_redis() {
	free_port redis_port
	mkdir "$tmp/redis"
	redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
		--dir "$tmp/redis" --logfile "$tmp/redis.log" --daemonize no &
	pids+=($!)
	wait_for redis-server redis-cli -p "$redis_port" ping
}

start_upstream() {
	upstream_token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	BAMBOO_TOKEN=$upstream_token "$tmp/bambooserver" -projects "$PROJECTS" -plans "$PLANS" \
		>"$tmp/bambooserver.out" 2>"$tmp/bambooserver.log" &
	pids+=($!)
	local pid=$!
	wait_for bambooserver test -s "$tmp/bambooserver.out"
	alive "$pid" bambooserver "$tmp/bambooserver.log"
	upstream_url=$(head -1 "$tmp/bambooserver.out")
	upstream_hostport=${upstream_url#http://}
}

# write_policy grants the principal "bench" like proxy/bench_test.go: PROJ
# whole, the plan WEB-NIGHTLY, every 10th generated project whole and one
# plan of every 7th. It prints the number of projects the principal sees.
write_policy() {
	local plan=TEST i key visible=2
	[ "$PLANS" -ge 2 ] || plan=BUILD
	cp "$repo/model.conf" "$tmp/model.conf"
	{
		echo '# bench/projects.sh: the benchmark principal'
		echo 'p, bench, project:PROJ, view'
		echo 'p, bench, plan:WEB-NIGHTLY, view'
		for ((i = 1; i <= PROJECTS; i++)); do
			printf -v key 'B%03d' "$i"
			if ((i % 10 == 0)); then
				echo "p, bench, project:$key, view"
				visible=$((visible + 1))
			elif ((i % 7 == 0)); then
				echo "p, bench, plan:$key-$plan, view"
				visible=$((visible + 1))
			fi
		done
	} >"$tmp/policy.csv"
	echo "$visible"
}

start_facade() {
	free_port facade_port
	facade_url="http://127.0.0.1:$facade_port"
	jwt_secret=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
	export FACADE_MODEL="$tmp/model.conf" FACADE_POLICY="$tmp/policy.csv"
	"$tmp/facade" policy check >"$tmp/policy-check.out" 2>&1 || die "policy check: $(cat "$tmp/policy-check.out")"
	(
		cd "$tmp"
		export FACADE_ADDR="127.0.0.1:$facade_port" FACADE_PUBLIC_URL="$facade_url" \
			FACADE_REDIS_URL="redis://127.0.0.1:$redis_port/0" \
			FACADE_UPSTREAM_URL="$upstream_url" FACADE_UPSTREAM_TOKEN="$upstream_token" \
			FACADE_JWT_SECRET="$jwt_secret" FACADE_RATE_LIMIT=0 \
			FACADE_LOG_LEVEL=error FACADE_CACHE_TTL=60s
		exec "$tmp/facade" serve
	) 2>"$tmp/facade.log" &
	pids+=($!)
	facade_pid=$!
	wait_for facade curl -fsS "$facade_url/readyz"
	alive "$facade_pid" facade "$tmp/facade.log"
	bench_token=$(FACADE_JWT_SECRET=$jwt_secret "$tmp/facade" token --sub bench --role developer --ttl 2h)
}

# start_nginx runs nginx (daemon off, in the background) with two cached
# servers: one in front of the upstream, one in front of facade.
start_nginx() {
	free_port nginx_port
	free_port nginx_same_port
	local n="$tmp/nginx" user=''
	mkdir -p "$n/logs"
	if [ "$(id -u)" -eq 0 ]; then
		# Workers drop to nobody: let them reach their files in the temp dir.
		user='user nobody nogroup;'
		chmod 711 "$tmp"
		chmod 755 "$n"
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
    # sendfile: nginx's fast path for cached bodies. tcp_nopush stays off:
    # with it, keep-alive responses on loopback stall for tens of
    # milliseconds (measured: about 1,900 instead of 17,000-24,000 req/s).
    sendfile on;
    keepalive_requests 10000000;
    client_body_temp_path $n/client_body;
    proxy_temp_path $n/proxy_temp;
    fastcgi_temp_path $n/fastcgi_temp;
    uwsgi_temp_path $n/uwsgi_temp;
    scgi_temp_path $n/scgi_temp;
    proxy_cache_path $n/cache levels=1:2 keys_zone=bench:10m max_size=256m inactive=10m use_temp_path=off;

    upstream bamboo { server $upstream_hostport; keepalive 8; }
    upstream facade { server 127.0.0.1:$facade_port; keepalive 8; }

    proxy_http_version 1.1;
    proxy_cache bench;
    proxy_cache_key \$request_uri;
    proxy_cache_valid 200 60s;
    proxy_cache_lock on;
    proxy_ignore_headers Cache-Control Expires Set-Cookie Vary;
    add_header X-Cache-Status \$upstream_cache_status;

    # proxy_set_header is inherited only by levels that set none, so each
    # location names all of its own.
    # The upstream document facade caches: every project, plans expanded.
    server {
        listen 127.0.0.1:$nginx_port;
        location = /rest/api/latest/project {
            rewrite ^ $upstream_path? break;
            proxy_set_header Connection "";
            proxy_set_header Accept application/json;
            proxy_set_header Authorization "Bearer $upstream_token";
            proxy_pass http://bamboo;
        }
    }
    # Facade's own filtered answer for the one principal (the key ignores
    # the caller: fine for a benchmark, never for real traffic).
    server {
        listen 127.0.0.1:$nginx_same_port;
        location = /rest/api/latest/project {
            proxy_set_header Connection "";
            proxy_set_header Accept application/json;
            proxy_set_header Authorization "Bearer $bench_token";
            proxy_pass http://facade;
        }
    }
}
EOF
	nginx -t -p "$n" -c "$n/nginx.conf" >"$n/logs/test.out" 2>&1 || die "nginx -t: $(cat "$n/logs/test.out")"
	nginx -p "$n" -c "$n/nginx.conf" 2>"$n/logs/stderr.log" &
	pids+=($!)
	nginx_pid=$!
	wait_for nginx curl -sS -o /dev/null "http://127.0.0.1:$nginx_port/"
	alive "$nginx_pid" nginx "$n/logs/error.log"
}

# --- checks -------------------------------------------------------------------

# fetch URL FILE HEADER [curl args...]: GET into FILE, prints "STATUS
# VALUE" with the value of the response header HEADER (lower case).
fetch() {
	local url=$1 file=$2 header=$3
	shift 3
	curl -sS -o "$file" -D "$file.h" -w '%{http_code}' "$@" "$url"
	printf ' %s\n' "$(tr -d '\r' <"$file.h" | awk -F': ' -v h="$header" 'tolower($1) == h {print $2}')"
}

expect_status() { # what got want
	[ "${2%% *}" = 200 ] || die "$1 answered $2, want 200"
	[ -z "${3:-}" ] || [ "${2#* }" = "$3" ] || die "$1 answered $2, want X-Cache $3"
}

has() { grep -qF -- "$2" "$1"; }

warm_and_check() {
	local visible=$1 got auth=(-H "Authorization: Bearer $bench_token")
	got=$(fetch "$facade_url$project_path" "$tmp/facade.json" x-cache "${auth[@]}")
	expect_status facade "$got"
	got=$(fetch "$facade_url$project_path" "$tmp/facade.json" x-cache "${auth[@]}")
	expect_status facade "$got" HIT
	got=$(fetch "http://127.0.0.1:$nginx_port/rest/api/latest/project?expand=projects.project.plans" "$tmp/nginx.json" x-cache-status)
	got=$(fetch "http://127.0.0.1:$nginx_port/rest/api/latest/project?expand=projects.project.plans" "$tmp/nginx.json" x-cache-status)
	expect_status nginx-upstream "$got" HIT
	got=$(fetch "http://127.0.0.1:$nginx_same_port$project_path" "$tmp/same.json" x-cache-status)
	got=$(fetch "http://127.0.0.1:$nginx_same_port$project_path" "$tmp/same.json" x-cache-status)
	expect_status nginx-same "$got" HIT

	# facade's body is the filtered one, links rewritten; nginx's is not.
	has "$tmp/facade.json" "\"projects\":{\"size\":$visible," || die "facade: projects.size is not $visible"
	has "$tmp/facade.json" '"key":"WEB-NIGHTLY"' || die "facade: granted plan WEB-NIGHTLY missing"
	local key
	for key in MOBILE B001 WEB-PR; do
		! has "$tmp/facade.json" "\"key\":\"$key\"" || die "facade: $key is visible to bench"
	done
	! has "$tmp/facade.json" "$upstream_hostport" || die "facade: upstream host leaked into links"
	has "$tmp/nginx.json" '"key":"MOBILE"' || die "nginx: not the unfiltered document"
	cmp -s "$tmp/facade.json" "$tmp/same.json" || die "nginx-same does not hold facade's bytes"
	upstream_calls_before=$(upstream_calls)
}

# metric NAME_AND_LABELS_REGEX sums facade's counters matching it.
metric() {
	curl -fsS "$facade_url/metrics" | awk -v re="$1" '$0 ~ re && $0 !~ /^#/ {s += $NF} END {printf "%d\n", s}'
}
upstream_calls() { metric '^facade_upstream_calls_total'; }
project_ok() { metric '^facade_http_requests_total[{].*route="/rest/api/latest/project.*status="200"'; }
project_non200() { metric '^facade_http_requests_total[{].*route="/rest/api/latest/project.*status="[^2]'; }

# --- load -----------------------------------------------------------------------

write_report_lua() {
	cat >"$tmp/report.lua" <<'EOF'
-- Prints one machine-readable line after the run.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d errors=%d non2xx3xx=%d\n",
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
EOF
}

# cpu_ticks PID...: user+system clock ticks of the processes and their children threads.
cpu_ticks() {
	local pid total=0 t
	for pid in "$@"; do
		t=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')
		total=$((total + t))
	done
	echo "$total"
}

target_url() {
	case $1 in
	nginx-upstream) echo "http://127.0.0.1:$nginx_port/rest/api/latest/project?expand=projects.project.plans" ;;
	nginx-same) echo "http://127.0.0.1:$nginx_same_port$project_path" ;;
	facade) echo "$facade_url$project_path" ;;
	healthz) echo "$facade_url/healthz" ;;
	esac
}

target_pids() {
	case $1 in
	nginx*) pgrep -P "$nginx_pid" | tr '\n' ' ' ;;
	*) echo "$facade_pid" ;;
	esac
}

# run_wrk TARGET DURATION [profile]: prints the RESULT line plus
# "cpu_ticks=N"; with "profile" and PERF=1, records facade with perf.
run_wrk() {
	local target=$1 duration=$2 profile=${3:-} args=() before after out perf_pid=''
	[ "$target" = facade ] && args=(-H "Authorization: Bearer $bench_token")
	# shellcheck disable=SC2046
	before=$(cpu_ticks $(target_pids "$target"))
	if [ "$PERF" = 1 ] && [ "$profile" = profile ] && [ "$target" = facade ]; then
		perf record -F 999 -g -o "$tmp/perf.data" -p "$facade_pid" >/dev/null 2>&1 &
		perf_pid=$!
	fi
	out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$duration" --timeout 5s -s "$tmp/report.lua" "${args[@]}" "$(target_url "$target")")
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
	fi
	# shellcheck disable=SC2046
	after=$(cpu_ticks $(target_pids "$target"))
	printf '%s cpu_ticks=%d\n' "$(grep '^RESULT' <<<"$out")" $((after - before))
}

field() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" <<<"$1"; }

# median_result FILE: the line with the median requests/s.
median_result() {
	awk '{for (i = 1; i <= NF; i++) if ($i ~ /^requests=/) {split($i, a, "="); r = a[2]} ; for (i = 1; i <= NF; i++) if ($i ~ /^duration_us=/) {split($i, b, "="); d = b[2]} ; print r / d, $0}' "$1" |
		sort -g | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}' | cut -d' ' -f2-
}

measure() {
	local t r
	log "warm-up: wrk $WARMUP per target"
	for t in "${targets[@]}"; do run_wrk "$t" "$WARMUP" >/dev/null; done
	non200_before=$(project_non200)
	ok_before=$(project_ok)
	for ((r = 1; r <= ROUNDS; r++)); do
		for t in "${targets[@]}"; do
			log "round $r/$ROUNDS: $t, wrk -t$THREADS -c$CONNECTIONS -d$DURATION"
			run_wrk "$t" "$DURATION" profile >>"$tmp/result.$t"
		done
	done
	for t in "${targets[@]}"; do median_result "$tmp/result.$t" >"$tmp/median.$t"; done
}

# targets lists the known targets asked for in TARGETS, facade always.
targets=()
choose_targets() {
	local t
	for t in nginx-upstream nginx-same facade healthz; do
		case " $TARGETS facade " in *" $t "*) targets+=("$t") ;; esac
	done
}

# --- report ---------------------------------------------------------------------

declare -A rps_of # target -> median requests/s, filled by row

has_target() { case " ${targets[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

ratio() { # label target [note]
	awk -v l="$1" -v f="${rps_of[facade]}" -v o="${rps_of[$2]}" -v note="${3:-}" 'BEGIN {printf "%-30s = %.2f%s\n", l, f / o, note}'
}

body_size() { wc -c <"$1" | tr -d ' '; }

row() { # label target body_file
	local line rps reqs
	line=$(cat "$tmp/median.$2")
	reqs=$(field "$line" requests)
	rps=$(awk -v n="$reqs" -v d="$(field "$line" duration_us)" 'BEGIN {printf "%.0f", n / d * 1e6}')
	rps_of[$2]=$rps
	awk -v label="$1" -v rps="$rps" -v p50="$(field "$line" p50_us)" -v p99="$(field "$line" p99_us)" \
		-v body="$3" -v bytes="$(field "$line" bytes)" -v n="$reqs" -v cpu="$(field "$line" cpu_ticks)" \
		-v hz="$(getconf CLK_TCK)" -v err="$(field "$line" errors)" -v bad="$(field "$line" non2xx3xx)" \
		'BEGIN {printf "%-36s %9s %8.2f %8.2f %9s %10.0f %8.1f %6d %8d\n", label, rps, p50 / 1000, p99 / 1000, body, bytes / n, cpu / hz * 1e6 / n, err, bad}'
}

report() {
	local cpus model host
	cpus=$(nproc)
	model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	host=$(uname -srm)
	echo
	echo "Facade warm filtered project list vs nginx proxy_cache, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $cpus CPUs ($model), $host, load avg $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, median of $ROUNDS round(s); upstream: $((PROJECTS + 4)) projects, $PLANS plans each (generated)"
	echo "facade principal sees $visible projects; nginx $(nginx -v 2>&1 | sed 's/.*\///'), redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
	echo
	printf '%-36s %9s %8s %8s %9s %10s %8s %6s %8s\n' target 'req/s' 'p50 ms' 'p99 ms' 'body B' 'resp B/req' 'cpu us/r' errors 'non-2xx'
	has_target nginx-upstream && row 'nginx proxy_cache (upstream doc)' nginx-upstream "$(body_size "$tmp/nginx.json")"
	has_target nginx-same && row 'nginx proxy_cache (facade bytes)' nginx-same "$(body_size "$tmp/same.json")"
	row 'facade filtered list' facade "$(body_size "$tmp/facade.json")"
	has_target healthz && row 'facade /healthz' healthz "$(curl -fsS "$facade_url/healthz" | wc -c | tr -d ' ')"
	echo
	has_target nginx-upstream && ratio 'facade / nginx (upstream doc)' nginx-upstream '   (goal >= 0.50)'
	has_target nginx-same && ratio 'facade / nginx (same bytes)' nginx-same
	has_target healthz && ratio 'facade list / facade /healthz' healthz
	echo "cpu us/r: server CPU time per request (nginx: its workers; facade: its process); wrk shares the same cores"
	echo "upstream calls during the runs: $(($(upstream_calls) - upstream_calls_before)); facade list answers: $facade_ok x 200, $(($(project_non200) - non200_before)) other"
}

verify_runs() {
	local t line
	for t in "$tmp"/result.*; do
		while read -r line; do
			if [ "$(field "$line" errors)" != 0 ] || [ "$(field "$line" non2xx3xx)" != 0 ]; then
				die "${t##*.}: errors in a run: $line"
			fi
		done <"$t"
	done
	[ $(($(project_non200) - non200_before)) -eq 0 ] || die "facade answered non-200 on the project list"
	# wrk counts completed responses; facade may have sent a few more that
	# were in flight when wrk stopped.
	local counted=0
	while read -r line; do counted=$((counted + $(field "$line" requests))); done <"$tmp/result.facade"
	facade_ok=$(($(project_ok) - ok_before))
	[ "$facade_ok" -ge "$counted" ] || die "facade counted $facade_ok answers 200, wrk $counted"
}

perf_report() {
	[ "$PERF" = 1 ] && [ -s "$tmp/perf.data" ] || return 0
	echo
	echo "perf: facade during its measured run, share of its samples including callees"
	perf report -i "$tmp/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
		sed -E 's/ +- +- *$//; s/ {2,}/ /g' |
		grep -E '^ ?[0-9.]+% .*(\(\*Server\)\.ServeHTTP|Handler\)\.Projects|writeJSON|Authenticator\)\.Principal|json\.Unmarshal|HMAC\)\.Verify|conn\)\.readRequest|chunkWriter\)\.writeHeader|finishRequest|gcBgMarkWorker$|mallocgc$| tcp_sendmsg$|_copy_from_iter|net_rx_action|MetricVec\).GetMetricWithLabelValues$)' || true
	echo
	echo "perf: top symbols by self time"
	perf report -i "$tmp/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
		sed -E 's/ +- +- *$//; s/ {2,}/ /g' | awk '/^ ?[0-9.]+%/ && ++n <= 20'
}

main() {
	install_missing
	require_tools
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/facade-bench.XXXXXX")
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	build
	start_redis
	start_upstream
	visible=$(write_policy)
	start_facade
	start_nginx
	warm_and_check "$visible"
	write_report_lua
	choose_targets
	measure
	verify_runs
	report
	perf_report
}

# Sourcing the file (for poking at a step) defines the functions only.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
