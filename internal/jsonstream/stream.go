// Package jsonstream writes one JSON document a member at a time, byte for byte as
// encoding/json writes the whole value: the debug server's dump streams the cache through it
// a part at a time, never holding the document.
package jsonstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/yield"
)

// Stream writes one JSON document an object member at a time, as json.Encoder writes a
// whole value: compact, or indented as with SetIndent("", "  "). Writes go through a
// bufio.Writer, whose first error FlushPart and End return. Maps are not sorted for the
// caller: it writes the members in key order, as encoding/json writes a map.
type Stream struct {
	w        *bufio.Writer
	buf      bytes.Buffer
	enc      *json.Encoder
	indented bool
	// members counts, for every object open, the members written so far.
	members []int
	// indents are the line prefixes by depth, built once.
	indents []string
	err     error
	// pace, when not nil, rests after each part (FlushPart).
	pace *yield.Pacer
	// yield gives way to waiting goroutines as values are encoded (between parts, the
	// lock released).
	yield yield.Yielder
	// scratch, pods and amounts are reused by the node writer (node.go).
	scratch []byte
	pods    []*corev1.Pod
	amounts []amount
}

// New returns a Stream writing to w, indented or compact. With a pace, the time spent
// writing to w is not counted as work and FlushPart rests as pace says; nil never rests.
func New(w io.Writer, indented bool, pace *yield.Pacer) *Stream {
	if pace != nil {
		w = pace.Writer(w)
	}
	s := &Stream{w: bufio.NewWriterSize(w, 64<<10), indented: indented, pace: pace, scratch: make([]byte, 0, 64)}
	s.enc = json.NewEncoder(&s.buf)
	return s
}

// Open starts an object (after a key, or as the document).
func (s *Stream) Open() {
	s.w.WriteByte('{')
	s.members = append(s.members, 0)
}

// Close ends the innermost object.
func (s *Stream) Close() { s.closeWith('}') }

// openArray starts an array (after a key, or as an element); element starts each element.
func (s *Stream) openArray() {
	s.w.WriteByte('[')
	s.members = append(s.members, 0)
}

// closeArray ends the innermost array.
func (s *Stream) closeArray() { s.closeWith(']') }

// closeWith ends the innermost object or array with c.
func (s *Stream) closeWith(c byte) {
	n := s.members[len(s.members)-1]
	s.members = s.members[:len(s.members)-1]
	if n > 0 {
		s.newline()
	}
	s.w.WriteByte(c)
}

// element starts an element of the innermost array (or a member of the innermost object:
// its key follows); its value follows.
func (s *Stream) element() {
	last := len(s.members) - 1
	if s.members[last] > 0 {
		s.w.WriteByte(',')
	}
	s.members[last]++
	s.newline()
}

// Key starts a member of the innermost object; its value follows.
func (s *Stream) Key(k string) {
	s.element()
	s.writeString(k)
	s.colon()
}

// colon ends a member's key.
func (s *Stream) colon() {
	if s.indented {
		s.w.WriteString(": ")
		return
	}
	s.w.WriteByte(':')
}

// KeyParts starts a member keyed by the joined parts (a pod's "namespace/name"), without
// building the key.
func (s *Stream) KeyParts(a, sep, b string) {
	s.element()
	s.writeParts(a, sep, b)
	s.colon()
}

// writeParts writes the string a+sep+b as encoding/json does: quoted as is when no byte
// needs escaping (object names never do), else built and through the encoder.
func (s *Stream) writeParts(a, sep, b string) {
	if !plainJSON(a) || !plainJSON(sep) || !plainJSON(b) {
		s.Encode(a + sep + b)
		return
	}
	s.w.WriteByte('"')
	s.w.WriteString(a)
	s.w.WriteString(sep)
	s.w.WriteString(b)
	s.w.WriteByte('"')
}

// writeString writes k as encoding/json encodes a string.
func (s *Stream) writeString(k string) { s.writeParts(k, "", "") }

// plainJSON reports whether encoding/json writes k between quotes unchanged: printable ASCII
// but the quote, the backslash and what it escapes for HTML (<, >, &).
func plainJSON(k string) bool {
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// Field writes a member whose value is encoded whole.
func (s *Stream) Field(k string, v any) {
	s.Key(k)
	s.Encode(v)
}

// Encode writes v through encoding/json, its lines indented to the depth of the innermost
// object when the stream is indented. Its first error is FlushPart's and End's.
func (s *Stream) Encode(v any) {
	s.yield.Step()
	s.buf.Reset()
	if s.indented {
		s.enc.SetIndent(s.indent(), "  ")
	}
	if err := s.enc.Encode(v); err != nil && s.err == nil {
		s.err = err
	}
	s.w.Write(bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")))
}

// indent is the prefix of a line at the depth of the innermost object.
func (s *Stream) indent() string {
	for len(s.indents) <= len(s.members) {
		s.indents = append(s.indents, strings.Repeat("  ", len(s.indents)))
	}
	return s.indents[len(s.members)]
}

func (s *Stream) newline() {
	if !s.indented {
		return
	}
	s.w.WriteByte('\n')
	for range len(s.members) {
		s.w.WriteString("  ")
	}
}

// FlushPart writes what is buffered (a bufio.Writer keeps its first error, returned here),
// rests (the pacer) and reports the first error so far, or ctx's when it is done: the
// stream stops there.
func (s *Stream) FlushPart(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	if s.pace != nil {
		err := s.pace.Rest(ctx)
		s.yield.Reset() // a rest gave the P away already
		return err
	}
	return ctx.Err()
}

// End finishes the document (a newline, as json.Encoder ends one) and writes what is
// buffered.
func (s *Stream) End() error {
	s.w.WriteByte('\n')
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}
