package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
)

// members is embedded in every wire type. It keeps what a typed struct
// would otherwise lose, so that decoding a Bamboo document and encoding it
// again gives back the same document:
//
//   - Extra holds the members the type does not model, verbatim (nil when
//     there are none). A modelled member whose value is null is kept here
//     too, so it stays null.
//   - present records which modelled members the decoded document carried:
//     such a member is encoded even when zero ("size": 0, "enabled": false,
//     "artifact": []), and a member that was absent stays absent unless the
//     program sets it to a non-zero value. A nil slice is never written, so
//     setting an item list to nil collapses it.
//
// Members tagged `wire:"always"` (the paging numbers of a list, which Bamboo
// always sends) are encoded even in a value built from scratch.
type members struct {
	Extra   map[string]json.RawMessage
	present uint64 // bit i: the i-th modelled member was in the decoded document
}

// wireField describes one modelled member of a wire type.
type wireField struct {
	index  int    // struct field index
	name   string // JSON member name
	quoted []byte // name as a JSON string, ready to write
	always bool   // encode even when zero and absent
	bit    uint64 // presence bit
}

var wireFieldCache sync.Map // reflect.Type -> []wireField

// wireObject is implemented by every wire type through its embedded members.
type wireObject interface{ wireMembers() *members }

func (m *members) wireMembers() *members { return m }

// wireFieldsOf lists the modelled members of struct type t (every field
// with a json tag other than "-"), cached per type.
func wireFieldsOf(t reflect.Type) []wireField {
	if cached, ok := wireFieldCache.Load(t); ok {
		return cached.([]wireField)
	}
	var fields []wireField
	for i := range t.NumField() {
		sf := t.Field(i)
		name := sf.Tag.Get("json")
		if name == "" || name == "-" {
			continue
		}
		quoted, _ := json.Marshal(name)
		fields = append(fields, wireField{
			index: i, name: name, quoted: quoted,
			always: sf.Tag.Get("wire") == "always",
			bit:    1 << len(fields),
		})
	}
	if len(fields) > 64 {
		panic("upstream: wire type " + t.Name() + " models more than 64 members")
	}
	wireFieldCache.Store(t, fields)
	return fields
}

// decodeObject fills the struct that ptr points to from the JSON object data.
func decodeObject(data []byte, ptr wireObject) error {
	rv := reflect.ValueOf(ptr).Elem()
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil // like encoding/json: null leaves the value alone
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	rv.SetZero()
	m := ptr.wireMembers()
	for _, f := range wireFieldsOf(rv.Type()) {
		value, ok := raw[f.name]
		if !ok || bytes.Equal(value, []byte("null")) {
			continue // absent, or null: null stays in Extra to be written back as null
		}
		if err := decodeMember(value, rv.Field(f.index)); err != nil {
			return fmt.Errorf("member %q: %w", f.name, err)
		}
		m.present |= f.bit
		delete(raw, f.name)
	}
	if len(raw) > 0 {
		m.Extra = raw
	}
	return nil
}

// encodeObject writes the struct ptr points to as a JSON object: modelled
// members first, in declaration order, then Extra in key order.
func encodeObject(ptr wireObject) ([]byte, error) {
	rv := reflect.ValueOf(ptr).Elem()
	m := ptr.wireMembers()
	var buf bytes.Buffer
	buf.WriteByte('{')
	var written uint64
	for _, f := range wireFieldsOf(rv.Type()) {
		fv := rv.Field(f.index)
		if fv.Kind() == reflect.Slice && fv.IsNil() {
			continue // a nil item list is a collapsed list, whatever was decoded
		}
		if !f.always && m.present&f.bit == 0 && fv.IsZero() {
			continue
		}
		value, err := encodeMember(fv)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", f.name, err)
		}
		writeMember(&buf, f.quoted, value)
		written |= f.bit
	}
	if err := writeExtra(&buf, m.Extra, rv.Type(), written); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var wireObjectType = reflect.TypeFor[wireObject]()

// isWireSlice reports whether t is a slice of wire types.
func isWireSlice(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && reflect.PointerTo(t.Elem()).Implements(wireObjectType)
}

// decodeMember decodes one member into dst. Nested wire types and slices
// of them are decoded directly rather than through json.Unmarshal, which
// would validate each nested document once more per level.
func decodeMember(raw json.RawMessage, dst reflect.Value) error {
	if obj, ok := dst.Addr().Interface().(wireObject); ok {
		return decodeObject(raw, obj)
	}
	if !isWireSlice(dst.Type()) {
		return json.Unmarshal(raw, dst.Addr().Interface())
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return err
	}
	slice := reflect.MakeSlice(dst.Type(), len(items), len(items))
	for i, item := range items {
		if err := decodeObject(item, slice.Index(i).Addr().Interface().(wireObject)); err != nil {
			return err
		}
	}
	dst.Set(slice)
	return nil
}

// encodeMember encodes one member; like decodeMember it writes nested wire
// types directly, skipping the re-validation json.Marshal does per level.
func encodeMember(v reflect.Value) ([]byte, error) {
	if obj, ok := v.Addr().Interface().(wireObject); ok {
		return encodeObject(obj)
	}
	if !isWireSlice(v.Type()) || v.IsNil() {
		return json.Marshal(v.Interface())
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			buf.WriteByte(',')
		}
		item, err := encodeObject(v.Index(i).Addr().Interface().(wireObject))
		if err != nil {
			return nil, err
		}
		buf.Write(item)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// writeExtra appends the unmodelled members, skipping any whose name a
// modelled member already wrote (the program set a value that was null).
func writeExtra(buf *bytes.Buffer, extra map[string]json.RawMessage, t reflect.Type, written uint64) error {
	fields := wireFieldsOf(t)
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		if i := slices.IndexFunc(fields, func(f wireField) bool { return f.name == name }); i >= 0 && written&fields[i].bit != 0 {
			continue
		}
		quoted, err := json.Marshal(name)
		if err != nil {
			return err
		}
		writeMember(buf, quoted, extra[name])
	}
	return nil
}

func writeMember(buf *bytes.Buffer, quotedName, value []byte) {
	if buf.Len() > 1 {
		buf.WriteByte(',')
	}
	buf.Write(quotedName)
	buf.WriteByte(':')
	buf.Write(value)
}
