package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKarmadaScenariosAreParsed(t *testing.T) {
	got, err := parseKarmadaScenarios("burst, cost")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"burst": true, "cost": true}, got)
	_, err = parseKarmadaScenarios("burst,delete")
	assert.ErrorContains(t, err, `unknown scenario "delete"`)
}
