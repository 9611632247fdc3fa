package authz

import (
	"testing"

	"github.com/facade-dev/facade"
)

// The zero AccountID names no account, so nothing is allowed on it even
// under a wildcard grant: asked as it is spelled ("account:"), casbin's
// keyMatch would let "account:*" match it.
func TestTheZeroAccountIsNobodysEvenUnderAWildcard(t *testing.T) {
	a, err := New("../model.conf", writePolicy(t, "p, alice, account:*, view_account", "p, alice, account:*, transfer"),
		Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	alice := facade.Principal{ID: "alice"}
	if !a.CanViewAccount(alice, accountID("1001")) {
		t.Fatal("the wildcard grant does not reach account 1001: the test's policy is not in force")
	}
	var zero facade.AccountID
	if a.CanViewAccount(alice, zero) || a.ListAccount(alice, zero) || a.MayDebit(alice, zero) ||
		a.CanTransfer(alice, zero, accountID("1001")) || a.CanTransfer(alice, accountID("1001"), zero) {
		t.Error("a question about the zero AccountID was allowed under account:*")
	}
}
