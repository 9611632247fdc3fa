package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/facade-dev/facade/grades"
)

// lectureSize is a large first-year lecture (docs/contract.md §4).
const lectureSize = 5000

// lecturePolicy enrols n students (s00000, s00001, ...) in lecture-1,
// taught by bob.
func lecturePolicy(n int) envOption {
	lines := []string{"p, bob, class:lecture-1, view", "p, bob, class:lecture-1, update"}
	for i := range n {
		lines = append(lines, fmt.Sprintf("g, student:s%05d, class:lecture-1", i))
	}
	return withPolicyLines(lines...)
}

func uploadTo(t testing.TB, e *env, class, query, csv string) (resp, gradebookAnswer) {
	t.Helper()
	r := e.do(req{method: "POST", path: "/class/" + class + "/grades" + query, token: token(t, "bob", "professor"), body: csv,
		header: map[string]string{"Content-Type": "text/csv"}})
	var a gradebookAnswer
	if r.status == 200 {
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			t.Fatal(err)
		}
	}
	return r, a
}

// TestGradebookLectureRoundTrip: a lecture of 5,000 students is graded by
// one upload (far past the 16 KiB of JSON bodies), and the file the
// service then downloads uploads back unchanged, dry run and real run:
// every row unchanged, nothing written.
func TestGradebookLectureRoundTrip(t *testing.T) {
	e := newEnv(t, lecturePolicy(lectureSize))
	var b strings.Builder
	b.WriteString("student_id,grade,version\n")
	scale := grades.Scale()
	for i := range lectureSize {
		if i%10 == 9 {
			fmt.Fprintf(&b, "s%05d,,\n", i) // every tenth student stays without a grade
			continue
		}
		fmt.Fprintf(&b, "s%05d,%s,\n", i, scale[i%len(scale)])
	}
	r, a := uploadTo(t, e, "lecture-1", "", b.String())
	if r.status != 200 || a.Changed != lectureSize-lectureSize/10 || a.Unchanged != lectureSize/10 || len(a.Rows) != lectureSize {
		t.Fatalf("grading upload: %d changed %d unchanged %d refused %d stale %d", r.status, a.Changed, a.Unchanged, a.Refused, a.Stale)
	}
	if a.Rows[0].Version != 1 || a.Rows[lectureSize-1].Line != lectureSize+1 {
		t.Fatalf("rows: first %+v last %+v", a.Rows[0], a.Rows[lectureSize-1])
	}
	bob := token(t, "bob", "professor")
	dl := e.do(req{method: "GET", path: "/class/lecture-1/grades", token: bob, header: map[string]string{"Accept": "text/csv"}})
	if dl.status != 200 || strings.Count(dl.body, "\n") != lectureSize+1 {
		t.Fatalf("download: %d, %d lines", dl.status, strings.Count(dl.body, "\n"))
	}
	for _, query := range []string{"?dry_run=1", ""} {
		r, a := uploadTo(t, e, "lecture-1", query, dl.body)
		if r.status != 200 || a.Unchanged != lectureSize || a.Changed+a.Stale+a.Refused != 0 {
			t.Fatalf("upload%s of the download: %d unchanged %d changed %d stale %d refused %d",
				query, r.status, a.Unchanged, a.Changed, a.Stale, a.Refused)
		}
	}
	again := e.do(req{method: "GET", path: "/class/lecture-1/grades", token: bob, header: map[string]string{"Accept": "text/csv"}})
	if again.body != dl.body {
		t.Fatal("uploading the download changed the gradebook")
	}
	// One row changed by someone else since the download: only it is stale.
	e.do(req{method: "PUT", path: "/student/s00000/english/grade", token: bob, body: `{"grade":"F"}`})
	_, a = uploadTo(t, e, "lecture-1", "", strings.Replace(dl.body, "s00001,A,1,", "s00001,B,1,", 1))
	if a.Stale != 1 || a.Changed != 1 || a.Rows[0].Outcome != "stale" || a.Rows[1].Outcome != "changed" || a.Rows[1].Version != 2 {
		t.Fatalf("after a change in between: stale %d changed %d rows %+v %+v", a.Stale, a.Changed, a.Rows[0], a.Rows[1])
	}
}

// TestGradebookUploadLimitIs2MiB: a gradebook may be 2 MiB, one byte
// more is 413 body-too-large naming the limit, whether the client
// declared its length or streamed it (chunked, read until it overflows);
// a JSON body keeps its 16 KiB.
func TestGradebookUploadLimitIs2MiB(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	const limit = 2 << 20
	file := func(size int) string {
		var b strings.Builder
		b.WriteString("student_id,grade,version,note\n")
		row := "nobody,A,1," + strings.Repeat("x", 1000) + "\n"
		for b.Len()+2*len(row) < size {
			b.WriteString(row)
		}
		pad := size - b.Len() - len("alice,B,1,\n")
		b.WriteString("alice,B,1," + strings.Repeat("y", pad) + "\n")
		return b.String()
	}
	exact := file(limit)
	if len(exact) != limit {
		t.Fatalf("test file is %d bytes", len(exact))
	}
	r, a := upload(t, e, token(t, "bob", "professor"), "?dry_run=1", exact)
	if r.status != 200 || a.Unchanged != 1 || a.Rows[len(a.Rows)-1].StudentID != "alice" {
		t.Fatalf("2 MiB: %d unchanged %d (%.200s)", r.status, a.Unchanged, r.body)
	}
	over := file(limit + 1)
	for _, chunked := range []bool{false, true} {
		hr, _ := http.NewRequest("POST", e.url+"/class/english-101/grades?dry_run=1", strings.NewReader(over))
		if chunked { // no Content-Length: the limit is met while reading
			hr, _ = http.NewRequest("POST", e.url+"/class/english-101/grades?dry_run=1", io.MultiReader(strings.NewReader(over)))
		}
		hr.Header.Set("Authorization", "Bearer "+token(t, "bob", "professor"))
		hr.Header.Set("X-XSRF-TOKEN", "t0k3n")
		hr.Header.Set("Content-Type", "text/csv")
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 413 || !strings.Contains(string(body), `"code":"body-too-large"`) || !strings.Contains(string(body), "2 MiB") {
			t.Errorf("2 MiB + 1 byte (chunked %v): %d %s", chunked, res.StatusCode, body)
		}
	}
	big := `{"grade":"` + strings.Repeat("A", 16<<10) + `"}`
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: token(t, "bob", "professor"), body: big}); r.status != 413 {
		t.Errorf("a JSON body over 16 KiB: %d", r.status)
	}
}

// BenchmarkGradebookUpload uploads a lecture's gradebook through the whole
// server (every middleware, the rate limiter on, the log at info to a file
// as facade serve writes it), 5,000 rows beside a 500-row baseline in the
// same run, as a dry run and applied: ns/row stays flat when the work per
// row is pipelined (grades.Store.ApplyRows), and ms/upload is what a
// lecturer waits.
//
//	go test -run '^$' -bench GradebookUpload -benchtime 5x ./server
func BenchmarkGradebookUpload(b *testing.B) {
	e := newEnv(b, lecturePolicy(lectureSize), withRateLimit(1_000_000), withProductionLogFile(b))
	bob := "Bearer " + token(b, "bob", "professor")
	version := make([]int, lectureSize) // each student's grade version (0: none yet)
	file := func(rows int, grade string) string {
		var s strings.Builder
		s.WriteString("student_id,grade,version\n")
		for i := range rows {
			if version[i] == 0 {
				fmt.Fprintf(&s, "s%05d,%s,\n", i, grade)
			} else {
				fmt.Fprintf(&s, "s%05d,%s,%d\n", i, grade, version[i])
			}
		}
		return s.String()
	}
	send := func(b *testing.B, query, body string, rows int) {
		r := httptest.NewRequest(http.MethodPost, "/class/lecture-1/grades"+query, strings.NewReader(body))
		r.Header.Set("Authorization", bob)
		r.Header.Set("X-XSRF-TOKEN", "t0k3n")
		r.Header.Set("Content-Type", "text/csv")
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, r)
		var a gradebookAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &a); w.Code != http.StatusOK || err != nil || a.Changed != rows {
			b.Fatalf("status %d, %d of %d rows changed", w.Code, a.Changed, rows)
		}
	}
	for _, rows := range []int{500, lectureSize} {
		for _, dry := range []bool{true, false} {
			name := fmt.Sprintf("rows=%d/apply", rows)
			if dry {
				name = fmt.Sprintf("rows=%d/dry_run", rows)
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					body := file(rows, "ABCDF"[version[0]%5:version[0]%5+1]) // another grade than the stored one
					b.StartTimer()
					if dry {
						send(b, "?dry_run=1", body, rows)
						continue
					}
					send(b, "", body, rows)
					for j := range rows {
						version[j]++
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/upload")
			})
		}
	}
}
