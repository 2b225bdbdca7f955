package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
)

// TestRoundTripTypes fills every federation type with random values and
// checks that encoding and decoding gives the same object back.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, Install, fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs))
}
