package testsupport

import (
	"testing"
	"time"
)

// Eventually polls cond every interval until it holds, failing the test with cond's last
// message once timeout has passed.
func Eventually(t testing.TB, what string, timeout, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s: %s", what, msg)
		}
		time.Sleep(interval)
	}
}
