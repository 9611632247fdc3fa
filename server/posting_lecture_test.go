package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkPostLecture: posting a class of 5,000 students whose grades
// all wait, in one request (docs/performance.md, "Posting"). Each round
// first changes every grade through a gradebook upload under the manual
// policy (not timed), then posts the class (timed).
func BenchmarkPostLecture(b *testing.B) {
	e := newEnv(b, lecturePolicy(lectureSize), withPolicyLines("p, bob, class:lecture-1, post"),
		withRateLimit(1_000_000), withProductionLogFile(b))
	bob := "Bearer " + token(b, "bob", "professor")
	send := func(method, path, contentType, body string) []byte {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", bob)
		r.Header.Set("X-XSRF-TOKEN", "t0k3n")
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	send("PUT", "/class/lecture-1/posting", "application/json", `{"policy":"manual"}`)
	scale := []string{"A", "B"}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var f strings.Builder
		f.WriteString("student_id,grade,version\n")
		for s := range lectureSize {
			if i == 0 {
				fmt.Fprintf(&f, "s%05d,%s,\n", s, scale[i%2])
			} else {
				fmt.Fprintf(&f, "s%05d,%s,%d\n", s, scale[i%2], i)
			}
		}
		var a gradebookAnswer
		if err := json.Unmarshal(send("POST", "/class/lecture-1/grades", "text/csv", f.String()), &a); err != nil || a.Changed != lectureSize {
			b.Fatalf("round %d: %d changed (%v)", i, a.Changed, err)
		}
		b.StartTimer()
		var res struct {
			Posted int `json:"posted"`
		}
		if err := json.Unmarshal(send("POST", "/class/lecture-1/grades/post", "", ""), &res); err != nil || res.Posted != lectureSize {
			b.Fatalf("round %d: posted %d (%v)", i, res.Posted, err)
		}
	}
}
