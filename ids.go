package facade

// Identifier formats of docs/contract.md §3, in one place. Every package that
// turns an identifier into a Redis key, an upstream URL or a policy object
// checks it with these; none of them admits '/', '%', '?', '#', spaces or
// control characters.

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

// ValidGroupName reports whether s may name a group a principal carries
// (Principal.Groups): the format of ValidID, ^[A-Za-z0-9._@-]{1,64}$. No
// colon, comma, quote, space or wildcard: group:<name> is always one group
// of the policy, never a list, a prefix of another subject or a pattern.
func ValidGroupName(s string) bool { return ValidID(s) }

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
