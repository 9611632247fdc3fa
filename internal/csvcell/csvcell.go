// Package csvcell keeps the CSV files the service writes (a class's
// gradebook, an account's statement) from running as formulas when a
// spreadsheet opens them (OWASP, "CSV Injection"), and undoes that on the
// gradebook's way back in, so a downloaded file uploads unchanged
// (docs/contract.md §4 and §5).
package csvcell

import "strings"

// formulaStarts are the first characters that make a spreadsheet read a
// cell as a formula. Student and account ids may start with '-' or '@',
// grades end in '-' or '+', references are free text: none of this is
// hypothetical.
const formulaStarts = "=+-@\t\r"

// Safe prefixes a cell that a spreadsheet would run as a formula with a
// single quote, which spreadsheets show as text.
func Safe(s string) string {
	if s != "" && strings.ContainsRune(formulaStarts, rune(s[0])) {
		return "'" + s
	}
	return s
}

// Unsafe removes the quote Safe added, and only that quote: a cell that
// starts with a quote followed by anything else is left as it is.
func Unsafe(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune(formulaStarts, rune(s[1])) {
		return s[1:]
	}
	return s
}
