package plugin

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestArgs_DefaultsAndDecodingFromAProfile: no args give the defaults; args from a
// profile's YAML decode; the cache's own flags come first so that the profile's win; a
// leader election of the cache's own and a non-positive timeout are refused.
func TestArgs_DefaultsAndDecodingFromAProfile(t *testing.T) {
	args, err := DecodeArgs(nil)
	if err != nil || *args.PermitWaitingTimeSeconds != DefaultPermitWaitingTimeSeconds || !*args.LeaderWork {
		t.Fatalf("defaults: %+v %v", args, err)
	}
	raw := &runtime.Unknown{Raw: []byte(`{"permitWaitingTimeSeconds":5,"leaderWork":false,"multicacheFlags":["--debug-bind-address=127.0.0.1:8082"]}`),
		ContentType: runtime.ContentTypeJSON}
	args, err = DecodeArgs(raw)
	if err != nil || *args.PermitWaitingTimeSeconds != 5 || *args.LeaderWork || args.permitTimeout().Seconds() != 5 {
		t.Fatalf("decoded: %+v %v", args, err)
	}
	flags := args.flags()
	if !slices.Equal(flags[:len(embeddedFlags)], embeddedFlags) || flags[len(flags)-1] != "--debug-bind-address=127.0.0.1:8082" {
		t.Errorf("flags %v: the embedded defaults must come first", flags)
	}
	for _, bad := range []string{`{"permitWaitingTimeSeconds":0}`, `{"multicacheFlags":["--leader-elect"]}`, `{"permitWaitingTimeSeconds":"x"}`} {
		if _, err := DecodeArgs(&runtime.Unknown{Raw: []byte(bad), ContentType: runtime.ContentTypeJSON}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
