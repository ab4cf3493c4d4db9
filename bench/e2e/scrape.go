package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// HeapAfterGC asks a Go process's /debug/pprof/ (base is the URL up to and including
// /debug/pprof) for its heap profile after a collection (gc=1) and returns HeapAlloc then:
// the live heap plus what was allocated since the collection ended, a few KB.
func HeapAfterGC(ctx context.Context, base string) (int64, error) {
	body, err := harness.Get(ctx, base+"/heap?gc=1&debug=1", harness.RequestTimeout)
	if err != nil {
		return 0, err
	}
	const key = "# HeapAlloc = "
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0, fmt.Errorf("no HeapAlloc in %s/heap", base)
	}
	rest := body[i+len(key):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
}
