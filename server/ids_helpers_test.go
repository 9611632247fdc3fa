package server_test

import (
	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/grades"
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

// studentID is a well-formed student id, parsed as the handlers parse one.
func studentID(s string) facade.StudentID {
	id, err := facade.ParseStudentID(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return id
}

// parsedGrade is a grade of the scale, parsed as the handlers parse one.
func parsedGrade(s string) grades.Grade {
	g, err := grades.ParseGrade(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return g
}
