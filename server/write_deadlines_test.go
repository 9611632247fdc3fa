package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// TestDownloadsRunWhileBytesFlowAndStopWhenTheReaderStalls: with a 1 s
// write deadline, a download read steadily for longer than that completes,
// and one whose reader stalls is cut off instead of holding the connection.
func TestDownloadsRunWhileBytesFlowAndStopWhenTheReaderStalls(t *testing.T) {
	// The deadline is 1 s, not a few hundred ms: each write of the steady
	// download must land within it, and a loaded machine can pause the
	// reader (or the server) for a few hundred ms between two writes.
	const size, writeTimeout = 32 << 20, time.Second
	e := newEnv(t, withBuilds(), withWriteTimeout(writeTimeout))
	e.bamboo.AddResult("WEB-NIGHTLY", 90, "Successful", bambootest.Artifact{
		Name: "big.img", ProducerJobKey: "JOB1", Shared: true, Size: size,
	})
	carol := token(t, "carol", "developer")
	download := func() *http.Response {
		r, _ := http.NewRequest("GET", e.url+"/browse/WEB-NIGHTLY-90/artifact/shared/big.img/", nil)
		r.Header.Set("Authorization", "Bearer "+carol)
		res, err := http.DefaultClient.Do(r)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("download: %v %v", res, err)
		}
		return res
	}

	steady := download()
	start, n := time.Now(), int64(0)
	buf := make([]byte, 1<<20)
	for {
		k, err := io.ReadFull(steady.Body, buf)
		n += int64(k)
		if err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond) // about 20 reads of 1 MiB a second: 1.6 s or more in all
	}
	steady.Body.Close()
	if n != size || time.Since(start) < writeTimeout {
		t.Errorf("steady reader got %d of %d bytes in %v", n, size, time.Since(start))
	}

	stalled := download()
	defer stalled.Body.Close()
	if _, err := io.ReadFull(stalled.Body, buf); err != nil {
		t.Fatal(err)
	}
	// The reader stalls until the server has given up on it: the download's
	// access line (carol's second) is written when its handler returns.
	// Waiting on that line instead of a fixed pause keeps the test honest
	// on a busy machine: it neither passes before the deadline fired nor
	// fails because the server was slow to notice.
	gaveUp := func() bool { return strings.Count(e.logs.String(), `"principal":"carol"`) >= 2 }
	if !moneyWaitFor(30*time.Second, gaveUp) {
		t.Fatalf("the server kept a stalled download open for 30 s past its %v write deadline", writeTimeout)
	}
	rest, _ := io.Copy(io.Discard, stalled.Body)
	if got := int64(len(buf)) + rest; got >= size {
		t.Errorf("a reader that stalled past the write deadline still got all %d bytes", got)
	}
}
