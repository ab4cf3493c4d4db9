// Package local holds what `multicache --local` gives its local cluster besides the CRDs.
package local

import _ "embed"

// KWOKStages are the stages KWOK's fake kubelets play (kwok --config).
//
//go:embed kwok-stages.yaml
var KWOKStages []byte
