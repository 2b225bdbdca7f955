package faults_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCompare checks the verifier's judgement on made-up states (no
// clusters: it runs under -short too).
func TestCompare(t *testing.T) {
	cm := func(gen int) map[string]string { return configMapData("cm-0001", gen) }
	web := func(replicas int32, gen string) deploymentState {
		return deploymentState{Replicas: replicas, Template: genAnnotation + "=" + gen + ",web=" + pauseImage}
	}
	one := func(cms map[string]map[string]string, deps map[string]deploymentState) state {
		s := newState()
		for k, v := range cms {
			s.ConfigMaps[k] = v
		}
		for k, v := range deps {
			s.Deployments[k] = v
		}
		return s
	}
	want := one(map[string]map[string]string{"cm-0001": cm(2)}, map[string]deploymentState{"web-00": web(3, "2")})
	inSync := map[string]state{
		"c1": one(map[string]map[string]string{"cm-0001": cm(2)}, map[string]deploymentState{"web-00": web(2, "2")}),
		"c2": one(map[string]map[string]string{"cm-0001": cm(2)}, map[string]deploymentState{"web-00": web(1, "2")}),
	}
	with := func(cluster string, change func(s state)) map[string]state {
		out := map[string]state{}
		for c, s := range inSync {
			cp := one(s.ConfigMaps, s.Deployments)
			if c == cluster {
				change(cp)
			}
			out[c] = cp
		}
		return out
	}
	for _, tc := range []struct {
		name            string
		want, fed       state
		members         map[string]state
		lost, duplicate int
	}{
		{name: "in sync", want: want, fed: want, members: inSync},
		{name: "a copy missing", want: want, fed: want, lost: 1,
			members: with("c2", func(s state) { delete(s.ConfigMaps, "cm-0001") })},
		{name: "a stale copy", want: want, fed: want, lost: 1,
			members: with("c1", func(s state) { s.ConfigMaps["cm-0001"] = cm(1) })},
		{name: "a stale pod template", want: want, fed: want, lost: 1,
			members: with("c1", func(s state) { s.Deployments["web-00"] = web(2, "1") })},
		{name: "replicas short", want: want, fed: want, lost: 1,
			members: with("c1", func(s state) { s.Deployments["web-00"] = web(1, "2") })},
		{name: "replicas over-counted", want: want, fed: want, duplicate: 1,
			members: with("c1", func(s state) { s.Deployments["web-00"] = web(3, "2") })},
		{name: "a copy without a federated object", want: want, fed: want, duplicate: 1,
			members: with("c2", func(s state) { s.ConfigMaps["cm-0999"] = cm(1) })},
		{name: "an acknowledged write the federation lost", want: want, lost: 1, members: inSync,
			fed: one(map[string]map[string]string{"cm-0001": cm(1)}, want.Deployments)},
		{name: "an object the federation lost (copies then strays)", want: want, lost: 1, duplicate: 2, members: inSync,
			fed: one(nil, want.Deployments)},
		{name: "a deleted object back at the federation", want: one(nil, want.Deployments), fed: want, duplicate: 1, members: inSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := compare(tc.want, tc.fed, tc.members)
			assert.Equal(t, tc.lost, v.Lost, "lost: %s", v)
			assert.Equal(t, tc.duplicate, v.Duplicated, "duplicated: %s", v)
			assert.Equal(t, tc.lost+tc.duplicate == 0, v.ok())
			if !v.ok() {
				assert.NotEmpty(t, v.Examples, "a verdict names what it found")
			}
		})
	}
}
