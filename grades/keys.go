package grades

// Redis keys owned by this package. Every key of one student carries the hash
// tag {studentID}, so a grade's record and its audit stream live in the same
// Redis Cluster slot and one Lua script may touch both (a script that touched
// two slots would fail with CROSSSLOT). Student ids arrive parsed
// (facade.StudentID), so they can never contain a brace or a colon that
// would move the tag or collide with another key.

const keyPrefix = "facade:grades:"

// recordKey is the hash holding the current grade: fields grade, updated_at,
// updated_by, version.
func recordKey(studentID, subject string) string {
	return keyPrefix + "{" + studentID + "}:" + subject
}

// auditKey is the stream of changes to one grade, oldest first, trimmed to
// about AuditRetention entries. Fields per entry: by, at, old, new, version.
func auditKey(studentID, subject string) string {
	return recordKey(studentID, subject) + ":audit"
}

// postingKey is the hash of the classes whose posting policy is manual:
// field class id, value "manual"; a class without a field is automatic
// (the default). One key, so reading the policies of a student's classes
// is one command on one node whatever the cluster.
const postingKey = keyPrefix + "posting"
