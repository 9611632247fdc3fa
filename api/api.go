// Package api holds the service's machine-readable contract: the OpenAPI
// 3.1 description of every route, embedded in the binary and served at
// /openapi.json. It is written by hand (openapi.json), except its error
// code lists and grade enum, which `go generate ./api` writes from the one
// table of codes and grades.Scale (tools/gencodes), and kept true by the server's tests, which check it against the route table and validate
// every response the test suite sees against it. Rules OpenAPI cannot
// carry (check order, the policy format, caching, decisions) are in
// docs/contract.md.
package api

import _ "embed"

//go:generate go run ../tools/gencodes openapi.json

// OpenAPI is the OpenAPI 3.1 document, as served.
//
//go:embed openapi.json
var OpenAPI []byte
