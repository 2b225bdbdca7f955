package hostplane

import (
	"io/fs"

	"github.com/federation-v1/federation/deploy"
)

// EmbeddedChart is the chart built into kubefed (deploy/charts/federation).
func EmbeddedChart() (*Chart, error) {
	sub, err := fs.Sub(deploy.Chart, "charts/federation")
	if err != nil {
		return nil, err
	}
	return LoadChart(sub)
}
