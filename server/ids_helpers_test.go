package server_test

import (
	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
)

// accountID is a well-formed account id, parsed as the handlers parse one.
func accountID(s string) facade.AccountID {
	id, err := facade.ParseAccountID(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return id
}

// transferAmount is a well-formed transfer amount under limit.
func transferAmount(s string, limit int64) accounts.TransferAmount {
	a, err := accounts.ParseTransferAmount(s, limit)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return a
}
