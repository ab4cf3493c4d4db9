package drift

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// versionSource is a Source that also lists the keys and versions of a listing's objects
// without decoding them (MetadataStream): what the comparison reads when no KeepFunc
// reads more.
type versionSource interface {
	Source
	// eachVersion calls fn with the key and resource version of every object of l;
	// version is valid only during the call.
	eachVersion(ctx context.Context, l Listing, fn func(key types.NamespacedName, version []byte) error) error
}
