package etag

import "testing"

// The tag is part of what clients keep between requests: a change of its
// spelling would turn every tag they hold into a miss (one full answer
// each, no harm) — this pins it so that such a change is deliberate.
func TestStrongIsTheQuotedHexOfTheBodysHash(t *testing.T) {
	for body, want := range map[string]string{
		"":            `"ef46db3751d8e999"`,
		"hello world": `"45ab6734b21e6968"`,
	} {
		if got := Strong([]byte(body)); got != want {
			t.Errorf("Strong(%q) = %s, want %s", body, got, want)
		}
	}
	if Strong([]byte("a")) == Strong([]byte("b")) {
		t.Error("two bodies, one tag")
	}
}
