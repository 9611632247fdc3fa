package grades

import (
	"strings"
	"testing"
)

// hashTag is what Redis Cluster hashes: the text between the first "{" and
// the next "}", when non-empty, else the whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// A grade's record and audit stream must share a Cluster slot, or the change
// script fails with CROSSSLOT there.
func TestKeysOfOneGradeShareASlot(t *testing.T) {
	for _, id := range []string{"alice", "a.b@c-d_e", "0", strings.Repeat("Z", 64)} {
		rk, ak := recordKey(id, SubjectEnglish), auditKey(id, SubjectEnglish)
		if !strings.HasPrefix(rk, "facade:grades:") || !strings.HasPrefix(ak, "facade:grades:") {
			t.Errorf("keys %q, %q are outside this package's namespace", rk, ak)
		}
		if hashTag(rk) != id || hashTag(ak) != id {
			t.Errorf("student %q: record key %q tag %q, audit key %q tag %q", id, rk, hashTag(rk), ak, hashTag(ak))
		}
	}
}
