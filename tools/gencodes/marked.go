package main

import (
	"bytes"
	"errors"
)

// writeMarked returns src with the part between the lines start and end
// replaced by body; the markers and the rest of src are kept byte for
// byte, so a file is partly written by hand and partly generated.
func writeMarked(src []byte, start, end, body string) ([]byte, error) {
	head, rest, ok := bytes.Cut(src, []byte(start))
	if !ok {
		return nil, errors.New("no start marker")
	}
	_, tail, ok := bytes.Cut(rest, []byte(end))
	if !ok {
		return nil, errors.New("no end marker")
	}
	var b bytes.Buffer
	b.Write(head)
	b.WriteString(start)
	b.WriteString(body)
	b.WriteString(end)
	b.Write(tail)
	return b.Bytes(), nil
}
