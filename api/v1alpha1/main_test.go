package v1alpha1_test

import (
	"testing"

	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

// env is the real kube-apiserver with the CRDs of config/crd/bases installed.
var env *testsupport.Env

func TestMain(m *testing.M) { testsupport.RunMain(m, &env) }
