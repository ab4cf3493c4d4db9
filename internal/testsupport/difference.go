package testsupport

import "fmt"

// FirstDifference describes where two documents part: the byte offset and 80 bytes either
// side of it in each.
func FirstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n got  ...%s\n want ...%s", i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}
