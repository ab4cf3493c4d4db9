package jsonstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestStream_KeysAreWrittenAsEncodingJSONWritesThem: a key written without the encoder
// (plain ones) or through it is what encoding/json writes for a map with that key, for
// every byte that it escapes and for the ones it does not.
func TestStream_KeysAreWrittenAsEncodingJSONWritesThem(t *testing.T) {
	keys := []string{"ns/p-1", "a.b-c_d:e/F9", "", "<tag>", "a&b", `quote"`, `back\slash`, "tab\t", "del\x7f", "é", "line\u2028sep", "~ !#$%'()*+,;=?@[]^`{|}"}
	for _, k := range keys {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		must(t, enc.Encode(map[string]int{k: 1}))

		for _, write := range []struct {
			name string
			key  func(s *Stream)
		}{
			{"key", func(s *Stream) { s.Key(k) }},
			{"keyParts", func(s *Stream) { s.KeyParts(k, "/", k) }},
		} {
			var got bytes.Buffer
			s := New(&got, true, nil)
			s.Open()
			write.key(s)
			s.Encode(1)
			s.Close()
			must(t, s.End())
			w := want.String()
			if write.name == "keyParts" {
				var kw bytes.Buffer
				enc := json.NewEncoder(&kw)
				enc.SetIndent("", "  ")
				must(t, enc.Encode(map[string]int{k + "/" + k: 1}))
				w = kw.String()
			}
			if got.String() != w {
				t.Errorf("%s(%q) wrote %q, encoding/json %q", write.name, k, got.String(), w)
			}
		}
	}
}

// must fails the test on a non-nil error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
