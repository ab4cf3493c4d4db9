// Package scheme builds the runtime.Scheme of every kind multicache reads or writes: the
// built-in Kubernetes kinds and cache.multicache.dev/v1alpha1.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	cachev1alpha1 "github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// New returns a new scheme with the built-in kinds and the multicache kinds.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	// Registering compiled-in types only fails on a programming error.
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := cachev1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
