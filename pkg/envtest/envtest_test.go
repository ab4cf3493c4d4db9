package envtest

import (
	"strings"
	"testing"
)

func TestStart_WithoutBinariesSaysWhereTheyAreExpected(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	_, err := Start(Options{})
	if err == nil || !strings.Contains(err.Error(), "KUBEBUILDER_ASSETS") || !strings.Contains(err.Error(), "make envtest-assets") {
		t.Errorf("error %v, want it to name KUBEBUILDER_ASSETS and how to build the binaries", err)
	}
	if _, err := Start(Options{AssetsDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("an empty assets directory: %v, want the missing binary named", err)
	}
}
