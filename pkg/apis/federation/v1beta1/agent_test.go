package v1beta1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAgentCertificatesAreBoundToOneClusterObject(t *testing.T) {
	c := &Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}
	assert.False(t, AgentCertificateBound(c, "a1"), "a new Cluster takes no certificate")
	for _, serial := range []string{"a1", "b2", "c3", "d4"} {
		c.Annotations = map[string]string{AgentCertificatesAnnotation: WithAgentCertificate(c, serial, "")}
	}
	assert.Equal(t, []string{"d4", "c3", "b2"}, AgentCertificates(c), "newest first, at most MaxAgentCertificates")
	assert.True(t, AgentCertificateBound(c, "c3"))
	assert.False(t, AgentCertificateBound(c, "a1"), "the oldest is dropped")
	assert.False(t, AgentCertificateBound(c, ""))
	c.Annotations[AgentCertificatesAnnotation] = WithAgentCertificate(c, "c3", "")
	assert.Equal(t, []string{"c3", "d4", "b2"}, AgentCertificates(c), "a serial is kept once")

	// Renewals made again and again with one certificate never drop it.
	for _, serial := range []string{"e5", "f6", "g7"} {
		c.Annotations[AgentCertificatesAnnotation] = WithAgentCertificate(c, serial, "b2")
	}
	assert.Equal(t, []string{"g7", "b2", "f6"}, AgentCertificates(c))
	c.Annotations[AgentCertificatesAnnotation] = WithAgentCertificate(c, "h8", "zz")
	assert.Equal(t, []string{"h8", "g7", "b2"}, AgentCertificates(c), "a serial not bound is not brought back")
}
