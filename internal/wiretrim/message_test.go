package wiretrim

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers on both sides of the masks' 64 and at the wire format's ends.
var numbers = []protowire.Number{1, 2, 3, 17, 62, 63, 64, 65, 127, 128, 1000, protowire.MaxValidNumber}

// randomMessage is a message of fields of numbers, of every wire type; at depth > 0 some
// length-delimited fields hold a message of their own.
func randomMessage(r *rand.Rand, depth int) []byte {
	var b []byte
	for range r.Intn(6) {
		num := numbers[r.Intn(len(numbers))]
		switch r.Intn(5) {
		case 0:
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, r.Uint64()>>r.Intn(64))
		case 1:
			b = protowire.AppendTag(b, num, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, r.Uint32())
		case 2:
			b = protowire.AppendTag(b, num, protowire.Fixed64Type)
			b = protowire.AppendFixed64(b, r.Uint64())
		default:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			if depth > 0 && r.Intn(2) == 0 {
				b = protowire.AppendBytes(b, randomMessage(r, depth-1))
			} else {
				b = protowire.AppendBytes(b, bytes.Repeat([]byte{byte(r.Intn(256))}, r.Intn(300)))
			}
		}
	}
	return b
}

// referenceTrim is what appendTrimmed must give, written the plain way: every field
// parsed, the dropped ones left out, the trimmed ones rebuilt with their new length.
func referenceTrim(paths []Path, msg []byte) ([]byte, bool) {
	var out []byte
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, false
		}
		field := msg[:n+m]
		msg = msg[n+m:]
		var deeper []Path
		dropped := false
		for _, p := range paths {
			switch {
			case len(p) == 1 && p[0] == num:
				dropped = true
			case len(p) > 1 && p[0] == num:
				deeper = append(deeper, p[1:])
			}
		}
		switch {
		case dropped:
		case len(deeper) > 0 && typ == protowire.BytesType:
			v, _ := protowire.ConsumeBytes(field[n:])
			inner, ok := referenceTrim(deeper, v)
			if !ok {
				return nil, false
			}
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, inner)
		default:
			out = append(out, field...)
		}
	}
	return out, true
}

// TestTree_TrimsAsTheReferenceDoes: random messages up to three deep, random paths of
// numbers under and over 64, cut at random places: the tree's walk gives the reference's
// bytes, also in place (into the message's own buffer), and fails, as valid says, where
// the reference fails.
func TestTree_TrimsAsTheReferenceDoes(t *testing.T) {
	r := rand.New(rand.NewSource(rand.Int63()))
	for i := range 20000 {
		var paths []Path
		for range 1 + r.Intn(4) {
			p := make(Path, 1+r.Intn(3))
			for j := range p {
				p[j] = numbers[r.Intn(len(numbers))]
			}
			paths = append(paths, p)
		}
		msg := randomMessage(r, 3)
		if r.Intn(5) == 0 && len(msg) > 0 {
			msg = msg[:r.Intn(len(msg))]
		}
		want, wantOK := referenceTrim(paths, msg)
		got, ok := newTree(paths).appendTrimmed([]byte("prefix"), msg)
		if ok != wantOK || (ok && !bytes.Equal(got, append([]byte("prefix"), want...))) {
			t.Fatalf("case %d, paths %v: ok %t, want %t; got %x, want %x", i, paths, ok, wantOK, got, want)
		}
		tree := newTree(paths)
		if valid := tree.valid(msg); valid != wantOK {
			t.Fatalf("case %d, paths %v: valid %t, the reference trims: %t", i, paths, valid, wantOK)
		}
		if ok {
			// In place, as a list is trimmed: the same bytes.
			in := bytes.Clone(msg)
			if got, _ := tree.appendTrimmed(in[:0], in); !bytes.Equal(got, want) {
				t.Fatalf("case %d, paths %v: in place %x, want %x", i, paths, got, want)
			}
		}
		if ok && slices.ContainsFunc(paths, func(p Path) bool { return len(p) == 1 }) && len(want) > len(msg) {
			t.Fatalf("case %d: trimming grew the message", i)
		}
	}
}
