package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCustomResourcesCanBeTurnedOffByCRDOrAll(t *testing.T) {
	o := NewOptions()
	o.Kubeconfig = "x"
	assert.True(t, o.enabled("customresourcedefinitions"))
	assert.True(t, o.customResourceEnabled("certificates.certs.example.com"), "'*' covers every CRD's resources")

	o.Controllers = []string{"*", "-certificates.certs.example.com"}
	assert.NoError(t, o.Validate())
	assert.False(t, o.customResourceEnabled("certificates.certs.example.com"))
	assert.True(t, o.customResourceEnabled("widgets.example.com"))

	o.Controllers = []string{"*", "-customresources"}
	assert.NoError(t, o.Validate())
	assert.False(t, o.customResourceEnabled("widgets.example.com"))
	assert.True(t, o.enabled("customresourcedefinitions"), "CRDs are still propagated")
}

func TestCustomResourceControllerNamesAreChecked(t *testing.T) {
	o := NewOptions()
	o.Kubeconfig = "x"
	o.Controllers = []string{"*", "-Widgets.Example_com"}
	assert.ErrorContains(t, o.Validate(), `--controllers: "Widgets.Example_com" is no custom resource's <plural>.<group>`)
	o.Controllers = []string{"*", "-widgetz"}
	assert.ErrorContains(t, o.Validate(), `unknown controller "widgetz"`)
}
