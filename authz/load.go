package authz

import (
	"crypto/sha256"
	"fmt"
	"os"

	"github.com/casbin/casbin/v2/model"
)

// files is one reading of model.conf and policy.csv.
type files struct {
	modelPath, policyPath string
	model, policy         []byte
	digest                [32]byte // of both contents: "nothing changed" is one compare
}

func readFiles(modelPath, policyPath string) (files, error) {
	f := files{modelPath: modelPath, policyPath: policyPath}
	var err error
	if f.model, err = os.ReadFile(modelPath); err != nil {
		return f, fmt.Errorf("authz: read model: %w", err)
	}
	if f.policy, err = os.ReadFile(policyPath); err != nil {
		return f, fmt.Errorf("authz: read policy: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", len(f.model))
	h.Write(f.model)
	h.Write(f.policy)
	copy(f.digest[:], h.Sum(nil))
	return f, nil
}

// check validates both files: the model's shape, the self-test, every
// policy line. It returns the casbin model and the valid lines.
func (f files) check() (model.Model, []entry, []Problem) {
	m, problems := checkModel(f.modelPath, string(f.model))
	if m != nil && !HasErrors(problems) {
		problems = append(problems, selfTest(f.modelPath, string(f.model))...)
	}
	entries, policyProblems := parsePolicy(f.policyPath, f.policy)
	return m, entries, append(problems, policyProblems...)
}

// compile checks and builds; a file with any refusing problem is an error.
func compile(f files) (*state, error) {
	m, entries, problems := f.check()
	if HasErrors(problems) {
		return nil, firstError(problems)
	}
	st, err := build(m, entries)
	if err != nil {
		return nil, fmt.Errorf("authz: casbin could not load %s: %w", f.policyPath, err)
	}
	st.digest = f.digest
	return st, nil
}

// Check validates modelPath and policyPath as `facade policy check` does and
// returns every problem (none means the files load). Warnings (duplicates)
// do not refuse the files; see HasErrors.
func Check(modelPath, policyPath string) []Problem {
	var problems []Problem
	for _, p := range []string{modelPath, policyPath} {
		if _, err := os.Stat(p); err != nil {
			problems = append(problems, Problem{File: p, Msg: "cannot read: " + err.Error()})
		}
	}
	if problems != nil {
		return problems
	}
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		return []Problem{{File: policyPath, Msg: err.Error()}}
	}
	_, _, problems = f.check()
	return problems
}
