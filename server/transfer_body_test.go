package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestTransferBodyIsReadOnce: a transfer's body, read once by the one
// body reader, is refused as every body is: past 16 KiB 413 whether the
// client declared its length or streamed it, and bytes that are not
// application/json 415; a body with no bytes is no reference whatever
// its Content-Type, and the transfer is made.
func TestTransferBodyIsReadOnce(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice := token(t, "alice", "customer")
	const path = "/rs/transfer/from/1001/to/2002/amount/1"
	send := func(body io.Reader, ctype string) (int, string) {
		hr, _ := http.NewRequest("POST", e.url+path, body)
		hr.Header.Set("Authorization", "Bearer "+alice)
		hr.Header.Set("X-XSRF-TOKEN", "t0k3n")
		hr.Header.Set("Content-Type", ctype)
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	big := `{"reference":"` + strings.Repeat("x", 16<<10) + `"}`
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked { // no Content-Length: the limit is met while reading
			body = io.MultiReader(body)
		}
		if status, b := send(body, "application/json"); status != 413 || !strings.Contains(b, `"code":"body-too-large"`) {
			t.Errorf("17 KiB (chunked %v): %d %s", chunked, status, b)
		}
	}
	if status, b := send(strings.NewReader(`{"reference":"x"}`), "text/plain"); status != 415 || !strings.Contains(b, `"code":"unsupported-media"`) {
		t.Errorf("a reference as text/plain: %d %s", status, b)
	}
	if status, b := send(io.MultiReader(strings.NewReader("")), "text/plain"); status != 201 || strings.Contains(b, "reference") {
		t.Errorf("an empty streamed body as text/plain: %d %s", status, b)
	}
}
