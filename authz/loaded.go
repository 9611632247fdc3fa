package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/casbin/casbin/v2/model"

	"github.com/facade-dev/facade/authz/compiled"
)

// Loaded is one load of model.conf and policy.csv: the compiled policy
// (package compiled) and what the service reads beside it (the roles the
// policy gives, the class lists, the page's holdings). Immutable once
// built; the Authorizer swaps a new one in whole (reload.go).
type Loaded struct {
	version  uint64
	hash     string   // hex SHA-256 (first 8 bytes) of model.conf and policy.csv contents
	digest   [32]byte // the whole SHA-256: "nothing changed" is one compare
	loadedAt time.Time
	pol      *compiled.Policy
	classes  classIndex
	roles    roleIndex      // the roles the policy gives (roles.go)
	grants   grants         // Holdings', built on first use
	use      *compiled.Uses // usage counts; nil when the Authorizer records none
}

// Compiled is the compiled policy: casbin's question, asked as the service
// asks it.
func (st *Loaded) Compiled() *compiled.Policy { return st.pol }

// Hash is the content hash /readyz and the metric show for these files:
// the same files give the same hash on every instance.
func (st *Loaded) Hash() string { return st.hash }

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

// check validates both files as casbin reads them (package compiled), plus
// the service's own vocabulary (lint.go). It returns the model and the
// rules casbin loads.
func (f files) check() (model.Model, []compiled.Rule, []compiled.Problem) {
	m, problems := compiled.CheckModel(f.modelPath, string(f.model))
	if m == nil {
		return nil, nil, problems
	}
	rules, policyProblems := compiled.ParsePolicy(f.policyPath, f.policy, m)
	problems = append(problems, policyProblems...)
	problems = append(problems, compiled.CheckPatterns(f.policyPath, m, rules)...)
	problems = append(problems, lint(f.policyPath, m, rules, f.forCheck)...)
	return m, rules, problems
}

// compile checks the files and compiles them (package compiled).
func compile(f files) (*Loaded, []compiled.Problem) {
	m, rules, problems := f.check()
	if compiled.HasErrors(problems) {
		return nil, problems
	}
	st := &Loaded{hash: f.hash(), digest: f.digest}
	if _, ok := m["g"][compiled.GroupRole]; ok {
		st.roles = newRoleIndex(rules)
	}
	pol, err := compiled.Compile(f.policyPath, m, rules)
	if err != nil {
		return nil, append(problems, compiled.Problem{File: f.policyPath, Msg: err.Error()})
	}
	if broken := compiled.FirstQuestion(f.modelPath, string(f.model), pol); len(broken) > 0 {
		return nil, append(problems, broken...)
	}
	st.pol = pol
	return st, problems
}

// Load reads and compiles modelPath and policyPath as New does, for the
// operator tools (package policytool); files with a refusing problem are
// an error naming the first (file:line). Warnings come back beside the
// policy.
func Load(modelPath, policyPath string) (*Loaded, []compiled.Problem, error) {
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
// the files; see compiled.HasErrors.
func Check(modelPath, policyPath string) []compiled.Problem {
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		return []compiled.Problem{{File: policyPath, Msg: "cannot read: " + err.Error()}}
	}
	f.forCheck = true
	_, problems := compile(f)
	return problems
}

// firstError formats the first refusing problem for an error message.
func firstError(problems []compiled.Problem) error {
	var first *compiled.Problem
	n := 0
	for i := range problems {
		if !problems[i].Warning {
			if first == nil {
				first = &problems[i]
			}
			n++
		}
	}
	if n == 1 {
		return fmt.Errorf("authz: %s", first)
	}
	return fmt.Errorf("authz: %s (and %d more problems; run `facade policy check`)", first, n-1)
}
