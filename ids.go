package facade

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Identifier formats of docs/contract.md §3, in one place. Every package that
// turns an identifier into a Redis key, an upstream URL or a policy object
// checks it with these; none of them admits '/', '%', '?', '#', spaces or
// control characters. Group names (ValidGroupName) are the exception: they
// only ever become policy subjects, compared whole, never keys or URLs.

// ValidID reports whether s is a well-formed student_id or account_id:
// ^[A-Za-z0-9._@-]{1,64}$.
func ValidID(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '@' && c != '-' {
			return false
		}
	}
	return true
}

// MaxGroupNameLen is the longest group name a principal may carry, in
// characters (docs/contract.md §2).
const MaxGroupNameLen = 256

// ValidGroupName reports whether s may name a group a principal carries
// (Principal.Groups): whatever an identity provider sends, 1 to
// MaxGroupNameLen printable characters of valid UTF-8, spaces, ':', '/',
// ',' and quotes included ("acme:payments", "team-a/admins", "Domain
// Users", Entra's object ids). Printable is unicode.IsGraphic: letters,
// marks, digits, punctuation, symbols and spaces; control characters
// (which could forge a log line or end a policy line) and invisible format
// characters are not. The policy names such a group as group:<name>, in
// casbin's CSV quoting where the name needs it, and a token's name is only
// ever compared whole with a policy line's: no name is a list, a prefix or
// a pattern of another.
func ValidGroupName(s string) bool {
	if s == "" || len(s) > utf8.UTFMax*MaxGroupNameLen {
		return false
	}
	ascii := len(s) <= MaxGroupNameLen
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] >= 0x20 && s[i] < 0x7f // printable ASCII, space included
	}
	if ascii { // nearly every name (Entra ids, LDAP and GitHub names), checked without decoding UTF-8
		return true
	}
	if !utf8.ValidString(s) {
		return false
	}
	n := 0
	for _, r := range s {
		if n++; n > MaxGroupNameLen || !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// ValidProjectKey reports whether s is a Bamboo project key:
// ^[A-Z][A-Z0-9]{0,63}$.
func ValidProjectKey(s string) bool {
	return len(s) >= 1 && len(s) <= 64 && s[0] >= 'A' && s[0] <= 'Z' && upperDigits(s[1:])
}

// ValidPlanKey reports whether s is a plan's own key (the part after
// "PROJECT-"): ^[A-Z0-9]{1,64}$. Job short keys share the format.
func ValidPlanKey(s string) bool { return len(s) >= 1 && len(s) <= 64 && upperDigits(s) }

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func upperDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Identifiers that cross layers are typed: the HTTP handlers, the CLI and
// the seed loader parse text into them once, with the constructors below,
// and authorization and the stores take them as they are, without checking
// them again. Each is a struct around its text, so no package outside this
// one can build one unchecked; its zero value is the only other value
// there is, and it names nothing (String is "").

// id is the text of a well-formed student_id, account_id or class_id
// (ValidID); the zero value is "".
type id struct{ s string }

// String is the identifier as the client wrote it.
func (i id) String() string { return i.s }

// IsZero reports whether i is its type's zero value, which no parse returns.
func (i id) IsZero() bool { return i.s == "" }

func parseID(s string) (id, error) {
	if !ValidID(s) {
		return id{}, ErrBadIdentifier
	}
	return id{s}, nil
}

// AccountID is a well-formed account_id (docs/contract.md §3), made only by
// ParseAccountID. The zero value names no account.
type AccountID struct{ id }

// ParseAccountID returns s as an AccountID, or ErrBadIdentifier when s is
// not ^[A-Za-z0-9._@-]{1,64}$.
func ParseAccountID(s string) (AccountID, error) {
	i, err := parseID(s)
	return AccountID{i}, err
}

// StudentID is a well-formed student_id (docs/contract.md §3), made only by
// ParseStudentID. The zero value names no student.
type StudentID struct{ id }

// ParseStudentID returns s as a StudentID, or ErrBadIdentifier when s is
// not ^[A-Za-z0-9._@-]{1,64}$.
func ParseStudentID(s string) (StudentID, error) {
	i, err := parseID(s)
	return StudentID{i}, err
}

// ClassID is a well-formed class id (docs/contract.md §3, the format of a
// student_id), made only by ParseClassID. The zero value names no class.
type ClassID struct{ id }

// ParseClassID returns s as a ClassID, or ErrBadIdentifier when s is not
// ^[A-Za-z0-9._@-]{1,64}$.
func ParseClassID(s string) (ClassID, error) {
	i, err := parseID(s)
	return ClassID{i}, err
}

// ProjectKey is a Bamboo project key (ValidProjectKey), made only by
// ParseProjectKey. The zero value names no project.
type ProjectKey struct{ s string }

// ParseProjectKey returns s as a ProjectKey, or ErrBadIdentifier when s is
// not ^[A-Z][A-Z0-9]{0,63}$.
func ParseProjectKey(s string) (ProjectKey, error) {
	if !ValidProjectKey(s) {
		return ProjectKey{}, ErrBadIdentifier
	}
	return ProjectKey{s}, nil
}

// String is the key as Bamboo writes it ("PROJ").
func (k ProjectKey) String() string { return k.s }

// IsZero reports whether k is the zero ProjectKey, which no parse returns.
func (k ProjectKey) IsZero() bool { return k.s == "" }

// Plan returns the plan of k whose own key is short (ValidPlanKey), or
// ErrBadIdentifier. k must not be zero.
func (k ProjectKey) Plan(short string) (PlanKey, error) {
	if k.IsZero() || !ValidPlanKey(short) {
		return PlanKey{}, ErrBadIdentifier
	}
	return PlanKey{project: k, short: short}, nil
}

// PlanKey is a plan's full key, PROJECT-PLAN, made only by ParsePlanKey
// or ProjectKey.Plan: the unit of authorization for results and
// artifacts. The zero value names no plan.
type PlanKey struct {
	project ProjectKey
	short   string
}

// ParsePlanKey returns s, "PROJECT-PLAN", as a PlanKey, or
// ErrBadIdentifier when either part is malformed or s has another dash.
func ParsePlanKey(s string) (PlanKey, error) {
	project, short, ok := strings.Cut(s, "-")
	if !ok {
		return PlanKey{}, ErrBadIdentifier
	}
	k, err := ParseProjectKey(project)
	if err != nil {
		return PlanKey{}, err
	}
	return k.Plan(short)
}

// Project is the plan's project.
func (k PlanKey) Project() ProjectKey { return k.project }

// Short is the plan's own key (PLAN of PROJECT-PLAN).
func (k PlanKey) Short() string { return k.short }

// String is the full key as Bamboo writes it ("PROJ-PLAN"); "" for the
// zero PlanKey.
func (k PlanKey) String() string {
	if k.IsZero() {
		return ""
	}
	return k.project.s + "-" + k.short
}

// IsZero reports whether k is the zero PlanKey, which no parse returns.
func (k PlanKey) IsZero() bool { return k.short == "" }

// BuildKey is a key of Bamboo's build API as its paths carry it: a
// project (PROJ), a plan (PROJ-PLAN), a plan result (PROJ-PLAN-7, or
// PROJ-PLAN-latest for the latest) or a job result (PROJ-PLAN-JOB-7). It
// is made only by ParseBuildKey and PlanKey.Result, once, where a request
// names it; the build routes pick their route by its shape and the
// upstream client writes it into Bamboo's URL as it is. The zero value
// names nothing.
type BuildKey struct {
	project ProjectKey
	plan    string // the plan's own key; "" for a project
	job     string // the job's own key; "" unless a job result
	number  string // digits, or "latest"; "" for a project or plan
	text    string // the key as Bamboo writes it
}

// ParseBuildKey returns s as a BuildKey, or ErrBadIdentifier when s is
// none of PROJ, PROJ-PLAN, PROJ-PLAN-N (N digits or "latest") and
// PROJ-PLAN-JOB-N (N digits), each part of its format (ValidProjectKey,
// ValidPlanKey; a build number is 1-10 digits).
func ParseBuildKey(s string) (BuildKey, error) {
	parts := strings.SplitN(s, "-", 5)
	project, err := ParseProjectKey(parts[0])
	if err != nil {
		return BuildKey{}, err
	}
	k := BuildKey{project: project, text: s}
	ok := true
	switch len(parts) {
	case 1:
		return k, nil
	case 2:
		k.plan = parts[1]
	case 3:
		k.plan, k.number = parts[1], parts[2]
		ok = k.number == "latest" || ValidBuildNumber(k.number)
	case 4:
		k.plan, k.job, k.number = parts[1], parts[2], parts[3]
		ok = ValidPlanKey(k.job) && ValidBuildNumber(k.number)
	default:
		ok = false
	}
	if !ok || !ValidPlanKey(k.plan) {
		return BuildKey{}, ErrBadIdentifier
	}
	return k, nil
}

// Result returns the result of plan k numbered number (digits or
// "latest"), or ErrBadIdentifier. k must not be zero.
func (k PlanKey) Result(number string) (BuildKey, error) {
	if k.IsZero() || number != "latest" && !ValidBuildNumber(number) {
		return BuildKey{}, ErrBadIdentifier
	}
	return BuildKey{project: k.project, plan: k.short, number: number, text: k.String() + "-" + number}, nil
}

// ValidBuildNumber reports whether s is a build number: 1-10 digits.
func ValidBuildNumber(s string) bool {
	if len(s) < 1 || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Project is the key's project.
func (k BuildKey) Project() ProjectKey { return k.project }

// Plan is the key's plan, the unit of authorization for its results; the
// zero PlanKey for a project's key.
func (k BuildKey) Plan() PlanKey {
	if k.plan == "" {
		return PlanKey{}
	}
	return PlanKey{project: k.project, short: k.plan}
}

// Job is a job result's own job key (JOB of PROJ-PLAN-JOB-7); "" otherwise.
func (k BuildKey) Job() string { return k.job }

// Number is a result's build number, digits or "latest"; "" for a project
// or plan.
func (k BuildKey) Number() string { return k.number }

// String is the key as Bamboo writes it; "" for the zero BuildKey.
func (k BuildKey) String() string { return k.text }

// IsZero reports whether k is the zero BuildKey, which no parse returns.
func (k BuildKey) IsZero() bool { return k.text == "" }
