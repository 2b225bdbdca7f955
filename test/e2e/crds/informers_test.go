package crds_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// leakCRDs is how many CRDs checkInformersReleased creates and deletes.
const leakCRDs = 20

// leakCRD is the i-th CRD of checkInformersReleased, in the group the
// members were joined for.
func leakCRD(i int) (name, manifest string) {
	plural := fmt.Sprintf("leak%02ds", i)
	name = plural + ".certs.example.com"
	return name, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s
spec:
  group: certs.example.com
  scope: Namespaced
  names: {plural: %s, singular: leak%02d, kind: Leak%02d}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, name, plural, i, i)
}

// cmSample is what the controller manager's /metrics says of its member
// informers and goroutines.
type cmSample struct {
	// informers is federation_member_informers by cluster.
	informers map[string]float64
	// goroutines is go_goroutines.
	goroutines float64
	// leakSeries are the federation_member_cached_objects series of the
	// leak CRDs' resources.
	leakSeries []string
}

func (f *fixture) sample() (cmSample, error) {
	body, err := f.User.ControllerManagerMetrics("fed")
	if err != nil {
		return cmSample{}, err
	}
	informers, err := fedenv.MetricByLabel(body, "federation_member_informers", "cluster", nil)
	if err != nil {
		return cmSample{}, err
	}
	goroutines, err := fedenv.MetricByLabel(body, "go_goroutines", "", nil)
	if err != nil {
		return cmSample{}, err
	}
	cached, err := fedenv.MetricByLabel(body, "federation_member_cached_objects", "resource", nil)
	if err != nil {
		return cmSample{}, err
	}
	s := cmSample{informers: informers, goroutines: goroutines[""]}
	for resource := range cached {
		if strings.HasPrefix(resource, "leak") {
			s.leakSeries = append(s.leakSeries, resource)
		}
	}
	if _, ok := goroutines[""]; !ok {
		return s, fmt.Errorf("no go_goroutines in the controller manager's /metrics")
	}
	return s, nil
}

// checkInformersReleased creates leakCRDs CRDs at the federation, waits
// until they are Established in every member and the controller manager
// runs an informer of each in each member, deletes them, and checks that
// its member informers and goroutines come back to what they were
// (issue 34: the informers of custom resources were never released).
func (f *fixture) checkInformersReleased(clusters []string) {
	t := f.T
	ctx := context.Background()
	// The baseline: every member's informers counted, and the same in two
	// samples taken more than one recording period (5 s) apart, so that
	// what earlier steps started or stopped has settled.
	var base cmSample
	last := map[string]float64{}
	require.NoError(t, poll.UntilEvery(ctx, 2*converge, 6*time.Second, "the controller manager's informers to settle", func(ctx context.Context) error {
		s, err := f.sample()
		if err != nil {
			return err
		}
		previous := last
		last = s.informers
		for _, c := range clusters {
			if _, ok := s.informers[c]; !ok {
				return fmt.Errorf("no federation_member_informers of %s", c)
			}
		}
		if !maps.Equal(previous, s.informers) {
			return fmt.Errorf("informers %v, %v before", s.informers, previous)
		}
		base = s
		return nil
	}))
	t.Logf("before the CRDs: informers %v, %v goroutines", base.informers, base.goroutines)

	names := make([]string, leakCRDs)
	var all strings.Builder
	for i := range names {
		var manifest string
		names[i], manifest = leakCRD(i)
		all.WriteString("---\n" + manifest)
	}
	f.Apply(all.String())
	f.Kubectl(append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, prefixed("crd/", names)...)...)
	for _, name := range names {
		f.WaitIn(clusters, crds, "", name, established)
	}

	var peak cmSample
	require.NoError(t, poll.Until(ctx, 2*converge, "an informer of each CRD's resources in each member", func(ctx context.Context) error {
		s, err := f.sample()
		if err != nil {
			return err
		}
		for _, c := range clusters {
			if want := base.informers[c] + leakCRDs; s.informers[c] != want {
				return fmt.Errorf("%s: %v informers, want %v", c, s.informers[c], want)
			}
		}
		peak = s
		return nil
	}))
	t.Logf("with the CRDs: informers %v, %v goroutines", peak.informers, peak.goroutines)
	assert.Greater(t, peak.goroutines, base.goroutines+float64(leakCRDs*len(clusters)),
		"the member informers' goroutines show in go_goroutines")

	f.Kubectl(append([]string{"delete", "--timeout=120s"}, prefixed("crd/", names)...)...)
	for _, name := range names {
		f.WaitAbsent(clusters, crds, "", name)
	}

	// Within this margin of goroutines the controller manager is back
	// where it was; a leak is the ~leakCRDs*len(clusters)*5 goroutines of
	// the member informers, plus the propagation controllers'.
	const margin = 40
	require.NoError(t, poll.Until(ctx, 2*converge, "the informers and goroutines to be released", func(ctx context.Context) error {
		s, err := f.sample()
		if err != nil {
			return err
		}
		for _, c := range clusters {
			if s.informers[c] != base.informers[c] {
				return fmt.Errorf("%s: %v informers, %v before the CRDs", c, s.informers[c], base.informers[c])
			}
		}
		if len(s.leakSeries) > 0 {
			return fmt.Errorf("federation_member_cached_objects still has %v", s.leakSeries)
		}
		if s.goroutines > base.goroutines+margin {
			return fmt.Errorf("%v goroutines, %v before the CRDs (margin %d)", s.goroutines, base.goroutines, margin)
		}
		t.Logf("after the CRDs: informers %v, %v goroutines", s.informers, s.goroutines)
		return nil
	}))
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
