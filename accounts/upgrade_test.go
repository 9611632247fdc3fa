package accounts

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// sortedSetBuild is the last revision that keeps statements in sorted
// sets only (docs/operations.md, "Upgrading").
const sortedSetBuild = "f980b4f"

// TestRollingUpgradeFromTheSortedSetBuild upgrades for real: it builds
// facade at sortedSetBuild and at this tree, runs them on one
// redis-server as a rolling upgrade does, moves money through both and
// reads statements through both. Before the upgrade, during it (both
// builds serving, transfers through both at once, a page's next link
// followed on the other build) and after it (the old instances gone, the
// format key set): every statement read anywhere holds every transfer of
// the ledger exactly once, newest first, and the balances are the
// ledger's. It takes about a minute, most of it the two builds.
func TestRollingUpgradeFromTheSortedSetBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds facade twice: a minute or two on a busy machine")
	}
	began := time.Now()
	dir := t.TempDir()
	oldBin, newBin := filepath.Join(dir, "facade-old"), filepath.Join(dir, "facade-new")
	// One after the other: the second finds in the build cache every
	// package the first compiled and it shares.
	if err := goBuild("..", newBin); err != nil {
		t.Fatal(err)
	}
	if err := buildRevision(dir, sortedSetBuild, oldBin); err != nil {
		t.Fatal(err)
	}
	t.Logf("both builds in %v", time.Since(began).Round(time.Second))
	rdb := testredis.Client(t)
	env := upgradeEnv(t, dir, rdb)
	u := &upgrade{t: t, rdb: rdb, token: mintToken(t, newBin, env)}
	if out, err := runWith(env, oldBin, "seed", "--file", writeFile(t, dir, "seed.json",
		`{"accounts": [{"id": "A", "owner": "alice", "currency": "EUR", "balance": "1000.00"},
		               {"id": "B", "owner": "alice", "currency": "EUR", "balance": "1000.00"}]}`)); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}

	old1 := serve(t, oldBin, env)
	u.transfer(40, old1)
	u.everyStatementHoldsTheLedger("before the upgrade", old1)

	new1 := serve(t, newBin, env) // the rollout: both builds serve
	u.transfer(60, old1, new1)
	u.everyStatementHoldsTheLedger("during the rollout", old1, new1)
	u.nextLinksOpenOnTheOtherBuild(old1, new1)
	if n, _ := rdb.Exists(context.Background(), formatKey()).Result(); n != 0 {
		t.Fatal("the format key was set during the rollout")
	}

	old1.stop(t) // the rollout is done: no instance of the old build is left
	if err := rdb.Set(context.Background(), formatKey(), "stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	new2 := serve(t, newBin, env)
	u.transfer(60, new1, new2)
	u.everyStatementHoldsTheLedger("after the rollout", new1, new2)
	if n, _ := rdb.ZCard(context.Background(), historyKey("A")).Result(); n != 100 {
		t.Fatalf("after the rollout A's sorted set holds %d lines, want the 100 before", n)
	}
}

// upgrade is the state of one upgrade test: its Redis and its caller.
type upgrade struct {
	t     *testing.T
	rdb   redis.UniversalClient
	token string
}

// instance is one running facade serve.
type instance struct {
	base string
	cmd  *exec.Cmd
	done chan struct{} // closed once it has exited
	err  error         // its exit, once done
}

// transfer makes n transfers of 0.01 to 0.09 between A and B, spread over
// the instances and made from 4 goroutines each, so that each build's
// batches meet the other's.
func (u *upgrade) transfer(n int, through ...*instance) {
	u.t.Helper()
	var wg sync.WaitGroup
	workers := 4 * len(through)
	for w := range workers {
		in := through[w%len(through)]
		wg.Go(func() {
			for i := w; i < n; i += workers {
				from, to := "A", "B"
				if i%3 == 0 {
					from, to = "B", "A"
				}
				status, body := u.do(in, http.MethodPost, fmt.Sprintf("/rs/transfer/from/%s/to/%s/amount/0.0%d", from, to, 1+i%9), "")
				if status != http.StatusCreated {
					u.t.Errorf("transfer through %s: %d %s", in.base, status, body)
				}
			}
		})
	}
	wg.Wait()
	if u.t.Failed() {
		u.t.FailNow()
	}
}

// everyStatementHoldsTheLedger reads both accounts' statements through
// each instance: the newest page of 100 and every page of 7 back to the
// first transfer hold the ledger's transfers newest first, each once,
// with balances that run from the opening ones to the ledger's.
func (u *upgrade) everyStatementHoldsTheLedger(when string, through ...*instance) {
	u.t.Helper()
	ledger, moved := u.ledger()
	want := slices.Clone(ledger)
	slices.Reverse(want)
	for _, in := range through {
		for _, id := range []string{"A", "B"} {
			newest := u.page(in, "/rs/account/"+id+"/transfers?limit=100")
			if got := lineIDs(newest.Transfers); !slices.Equal(got, want[:min(100, len(want))]) {
				u.t.Fatalf("%s, %s's newest 100 through %s: %d lines, %d of them not the ledger's newest", when, id, in.base, len(got), missing(got, want))
			}
			all := u.walk(in, "/rs/account/"+id+"/transfers?limit=7")
			if got := lineIDs(all); !slices.Equal(got, want) {
				u.t.Fatalf("%s, %s's whole statement through %s: %d lines, want the ledger's %d (%d missing)", when, id, in.base, len(got), len(want), missing(got, want))
			}
			after, err := ParseBalance(all[0].BalanceAfter.String(), eur)
			if b := u.balance(in, id); b != 100_000+moved[id] || after != b || err != nil {
				u.t.Fatalf("%s, %s through %s: balance %d, newest line's balance_after %s; the ledger says %d", when, id, in.base, b, all[0].BalanceAfter, 100_000+moved[id])
			}
		}
	}
}

// nextLinksOpenOnTheOtherBuild: during the rollout a page's next link may
// reach an instance of the other build; it continues where the page
// stopped.
func (u *upgrade) nextLinksOpenOnTheOtherBuild(a, b *instance) {
	u.t.Helper()
	for _, pair := range [][2]*instance{{a, b}, {b, a}} {
		first := u.page(pair[0], "/rs/account/A/transfers?limit=10")
		second := u.page(pair[1], first.Next)
		whole := u.page(pair[0], "/rs/account/A/transfers?limit=20")
		if got := append(lineIDs(first.Transfers), lineIDs(second.Transfers)...); !slices.Equal(got, lineIDs(whole.Transfers)) {
			u.t.Fatalf("next link of %s followed on %s: %v, want %v", pair[0].base, pair[1].base, got, lineIDs(whole.Transfers))
		}
	}
}

// ledger returns the transfer ids of the ledger, in the order they were
// applied, and what they moved in and out of each account, in cents.
func (u *upgrade) ledger() ([]string, map[string]int64) {
	u.t.Helper()
	entries, err := u.rdb.XRange(context.Background(), ledgerKey(), "-", "+").Result()
	if err != nil {
		u.t.Fatal(err)
	}
	ids := make([]string, len(entries))
	moved := map[string]int64{}
	for i, e := range entries {
		ids[i], _ = e.Values["transfer"].(string)
		amount, _ := strconv.ParseInt(fmt.Sprint(e.Values["amount"]), 10, 64)
		moved[fmt.Sprint(e.Values["from"])] -= amount
		moved[fmt.Sprint(e.Values["to"])] += amount
	}
	return ids, moved
}

// upgradeLine is a statement line as the API answers it.
type upgradeLine struct {
	TransferID   string      `json:"transfer_id"`
	BalanceAfter json.Number `json:"balance_after"`
}

type upgradePage struct {
	Transfers []upgradeLine `json:"transfers"`
	Next      string        `json:"next"`
}

func (u *upgrade) page(in *instance, path string) upgradePage {
	u.t.Helper()
	status, body := u.do(in, http.MethodGet, path, "")
	var p upgradePage
	if status != http.StatusOK || json.Unmarshal(body, &p) != nil {
		u.t.Fatalf("GET %s%s: %d %s", in.base, path, status, body)
	}
	return p
}

// walk follows next links from path, on the same instance.
func (u *upgrade) walk(in *instance, path string) []upgradeLine {
	u.t.Helper()
	var all []upgradeLine
	for pages := 0; path != ""; pages++ {
		if pages > 1000 {
			u.t.Fatalf("the walk from %s does not end", path)
		}
		p := u.page(in, path)
		all = append(all, p.Transfers...)
		path = p.Next
	}
	return all
}

// balance is an account's balance through an instance, in cents.
func (u *upgrade) balance(in *instance, id string) int64 {
	u.t.Helper()
	status, body := u.do(in, http.MethodGet, "/rs/account/"+id+"/balance", "")
	var b struct {
		Balance json.Number `json:"balance"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &b) != nil {
		u.t.Fatalf("balance of %s: %d %s", id, status, body)
	}
	cents, err := ParseBalance(b.Balance.String(), eur)
	if err != nil {
		u.t.Fatalf("balance of %s: %s", id, body)
	}
	return cents
}

func (u *upgrade) do(in *instance, method, path, body string) (int, []byte) {
	req, err := http.NewRequest(method, in.base+path, strings.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("X-XSRF-TOKEN", "upgrade")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func lineIDs(lines []upgradeLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.TransferID
	}
	return out
}

// missing counts the ids of want that got lacks.
func missing(got, want []string) int {
	n := 0
	for _, id := range want {
		if !slices.Contains(got, id) {
			n++
		}
	}
	return n
}

// buildRevision builds cmd/facade as it was at rev, from git archive, as
// bench/run.sh's COMPARE does.
func buildRevision(dir, rev, out string) error {
	src := filepath.Join(dir, rev)
	archive := exec.Command("git", "archive", rev)
	archive.Dir = ".."
	stream, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	archive.Stderr = &stderr
	if err := archive.Start(); err != nil {
		return fmt.Errorf("git archive %s (the upgrade test needs the repository's history): %w", rev, err)
	}
	if err := untar(stream, src); err != nil {
		return err
	}
	if err := archive.Wait(); err != nil {
		return fmt.Errorf("git archive %s (the upgrade test needs the repository's history): %v: %s", rev, err, stderr.String())
	}
	return goBuild(src, out)
}

// untar writes a tar stream's files under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFrom(path, tr, os.FileMode(h.Mode)&0o777)
		}
		if err != nil {
			return err
		}
	}
}

func writeFrom(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}

func goBuild(src, out string) error {
	// -trimpath: the packages the two trees share have the same paths, so
	// the build cache serves them to both, and to the next run.
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/facade")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", src, err, b)
	}
	return nil
}

// upgradeEnv is what every instance runs with: the one Redis database, a
// policy letting alice move money between A and B and view both, no rate
// limit (a test's bursts are one principal's), quiet logs, no drain wait.
func upgradeEnv(t *testing.T, dir string, rdb *redis.Client) []string {
	secret := make([]byte, 48)
	_, _ = rand.Read(secret)
	model, err := filepath.Abs("../model.conf")
	if err != nil {
		t.Fatal(err)
	}
	policy := writeFile(t, dir, "policy.csv", "p, alice, account:A, transfer\np, alice, account:B, transfer\n"+
		"p, alice, account:A, view_account\np, alice, account:B, view_account\n")
	return append(os.Environ(),
		fmt.Sprintf("FACADE_REDIS_URL=redis://%s/%d", rdb.Options().Addr, rdb.Options().DB),
		"FACADE_JWT_SECRET="+base64.StdEncoding.EncodeToString(secret),
		"FACADE_MODEL="+model, "FACADE_POLICY="+policy,
		"FACADE_RATE_LIMIT=0", "FACADE_LOG_LEVEL=error", "FACADE_DRAIN_DELAY=0s")
}

func writeFile(t *testing.T, dir, name, content string) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runWith(env []string, bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return cmd.CombinedOutput()
}

func mintToken(t *testing.T, bin string, env []string) string {
	out, err := runWith(env, bin, "token", "--sub", "alice", "--role", "professor", "--ttl", "1h")
	if err != nil {
		t.Fatalf("token: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// serve starts bin serve on a free port and waits for /healthz; the test
// stops it at its end.
func serve(t *testing.T, bin string, env []string) *instance {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs strings.Builder
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(slices.Clone(env), "FACADE_ADDR="+addr, "FACADE_PUBLIC_URL=http://"+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{base: "http://" + addr, cmd: cmd, done: make(chan struct{})}
	go func() { in.err = cmd.Wait(); close(in.done) }()
	t.Cleanup(func() { in.stop(t) })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get(in.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return in
			}
		}
		select {
		case <-in.done:
			t.Fatalf("%s serve exited: %v\n%s", bin, in.err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s serve did not come up on %s:\n%s", bin, addr, logs.String())
		}
	}
}

// stop ends the instance as a rollout does (SIGTERM) and waits for it.
func (in *instance) stop(t *testing.T) {
	select {
	case <-in.done:
		return
	default:
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.done:
	case <-time.After(30 * time.Second):
		_ = in.cmd.Process.Kill()
		<-in.done
		t.Errorf("%s did not stop on SIGTERM", in.base)
	}
}
