package multicache

import (
	"testing"

	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

// env is the real kube-apiserver and etcd: New's manager asks it for its API groups.
var env *testsupport.Env

func TestMain(m *testing.M) { testsupport.RunMain(m, &env) }
