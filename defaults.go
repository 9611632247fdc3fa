package facade

import _ "embed"

// DefaultModel and DefaultPolicy are the repository's model.conf and
// policy.csv, built into the binary so `facade demo` needs no files.
// serve always reads FACADE_MODEL / FACADE_POLICY from disk instead.
var (
	//go:embed model.conf
	DefaultModel []byte
	//go:embed policy.csv
	DefaultPolicy []byte
)
