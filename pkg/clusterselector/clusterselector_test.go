package clusterselector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
)

func TestParse(t *testing.T) {
	clusterLabels := labels.Set{"cluster": "1", "region": "eu", "size": "5"}
	cases := []struct {
		name    string
		value   string
		matches bool
		wantErr string
	}{
		{name: "v1 example", value: `[{"key":"cluster","operator":"==","values":["1"]}]`, matches: true},
		{name: "empty array matches all", value: `[]`, matches: true},
		{name: "equals", value: `[{"key":"region","operator":"=","values":["us"]}]`, matches: false},
		{name: "not equals", value: `[{"key":"region","operator":"!=","values":["us"]}]`, matches: true},
		{name: "in lower", value: `[{"key":"region","operator":"in","values":["us","eu"]}]`, matches: true},
		{name: "In", value: `[{"key":"region","operator":"In","values":["us"]}]`, matches: false},
		{name: "notin", value: `[{"key":"region","operator":"notin","values":["us"]}]`, matches: true},
		{name: "NotIn", value: `[{"key":"region","operator":"NotIn","values":["eu"]}]`, matches: false},
		{name: "exists", value: `[{"key":"cluster","operator":"exists"}]`, matches: true},
		{name: "Exists", value: `[{"key":"zone","operator":"Exists"}]`, matches: false},
		{name: "bang", value: `[{"key":"zone","operator":"!"}]`, matches: true},
		{name: "DoesNotExist", value: `[{"key":"cluster","operator":"DoesNotExist"}]`, matches: false},
		{name: "gt", value: `[{"key":"size","operator":"gt","values":["4"]}]`, matches: true},
		{name: "Gt", value: `[{"key":"size","operator":"Gt","values":["5"]}]`, matches: false},
		{name: ">", value: `[{"key":"size","operator":">","values":["1"]}]`, matches: true},
		{name: "lt", value: `[{"key":"size","operator":"lt","values":["6"]}]`, matches: true},
		{name: "Lt", value: `[{"key":"size","operator":"Lt","values":["5"]}]`, matches: false},
		{name: "<", value: `[{"key":"size","operator":"<","values":["10"]}]`, matches: true},
		{name: "ANDed", value: `[{"key":"cluster","operator":"=","values":["1"]},{"key":"region","operator":"=","values":["us"]}]`, matches: false},
		{name: "unknown operator", value: `[{"key":"a","operator":"~","values":["1"]}]`, wantErr: `unknown operator "~"`},
		{name: "not JSON", value: `cluster=1`, wantErr: "not a JSON array"},
		{name: "object not array", value: `{"key":"a"}`, wantErr: "not a JSON array"},
		{name: "unknown field", value: `[{"key":"a","operator":"exists","value":"x"}]`, wantErr: `unknown field "value"`},
		{name: "trailing data", value: `[] []`, wantErr: "unexpected data"},
		{name: "equals needs one value", value: `[{"key":"a","operator":"=","values":["1","2"]}]`, wantErr: "requirement 0"},
		{name: "exists takes no value", value: `[{"key":"a","operator":"exists","values":["1"]}]`, wantErr: "requirement 0"},
		{name: "gt needs an integer", value: `[{"key":"a","operator":"gt","values":["x"]}]`, wantErr: "requirement 0"},
		{name: "invalid key", value: `[{"key":"not a key","operator":"exists"}]`, wantErr: "requirement 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			selector, err := Parse(c.value)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.matches, selector.Matches(clusterLabels))
		})
	}
}

func TestForObject(t *testing.T) {
	selector, err := ForObject(map[string]string{"other": "x"})
	require.NoError(t, err)
	assert.True(t, selector.Matches(labels.Set{"any": "thing"}), "no annotation selects every cluster")

	selector, err = ForObject(map[string]string{Annotation: `[{"key":"cluster","operator":"==","values":["1"]}]`})
	require.NoError(t, err)
	assert.True(t, selector.Matches(labels.Set{"cluster": "1"}))
	assert.False(t, selector.Matches(labels.Set{"cluster": "2"}))

	_, err = ForObject(map[string]string{Annotation: `nope`})
	assert.Error(t, err)
}
