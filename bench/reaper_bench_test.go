package bench

import (
	"fmt"
	"testing"
)

func BenchmarkReaperTick(b *testing.B) {
	for _, n := range ReaperSizes {
		f, err := NewReaperFixture(n, *pauseGCFlag)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), ReaperTick(f))
	}
}
