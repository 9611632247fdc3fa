package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/casbin/casbin/v2/model"
)

// files is one reading of model.conf and policy.csv.
type files struct {
	modelPath, policyPath string
	model, policy         []byte
	digest                [32]byte // of both contents: "nothing changed" is one compare
	// forCheck asks for the warnings only a person reading `policy check`
	// sees (group cycles, chains past casbin's depth): a walk of the whole
	// group graph that a service load or reload, which logs no warnings,
	// does not pay for.
	forCheck bool
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

// hash is the policy's content hash as /readyz and the metric show it: the
// same files give the same hash on every instance.
func (f files) hash() string { return hex.EncodeToString(f.digest[:8]) }

// check validates both files as casbin reads them, plus what ops would
// want to hear (see lint). It returns the model and the rules casbin loads.
func (f files) check() (model.Model, []rule, []Problem) {
	m, problems := checkModel(f.modelPath, string(f.model))
	if m == nil {
		return nil, nil, problems
	}
	rules, policyProblems := parsePolicy(f.policyPath, f.policy, m)
	problems = append(problems, policyProblems...)
	problems = append(problems, checkPatterns(f.policyPath, m, rules)...)
	problems = append(problems, lint(f.policyPath, m, rules, f.forCheck)...)
	return m, rules, problems
}

// load reads and compiles the two files; files with a refusing problem are
// an error naming the first (file:line). Warnings come back beside the
// state.
func load(modelPath, policyPath string) (*state, []Problem, error) {
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		return nil, nil, err
	}
	st, problems := compile(f)
	if st == nil {
		return nil, problems, firstError(problems)
	}
	return st, problems, nil
}

// Check validates modelPath and policyPath as `facade policy check` does and
// returns every problem (none means the files load). Warnings do not refuse
// the files; see HasErrors.
func Check(modelPath, policyPath string) []Problem {
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		return []Problem{{File: policyPath, Msg: "cannot read: " + err.Error()}}
	}
	f.forCheck = true
	_, problems := compile(f)
	return problems
}
