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

// Consistently checks cond every interval for d, failing the test with cond's message the
// first time it does not hold.
func Consistently(t testing.TB, what string, d, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(interval) {
		if ok, msg := cond(); !ok {
			t.Fatalf("%s stopped holding: %s", what, msg)
		}
	}
}
