package ownership

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// labelled is a member object with the federation labels given ("" for
// none).
func labelled(name, uid string) *metav1.ObjectMeta {
	l := map[string]string{}
	if name != "" {
		l[federationv1beta1.FederationLabel] = name
	}
	if uid != "" {
		l[federationv1beta1.FederationUIDLabel] = uid
	}
	return &metav1.ObjectMeta{Name: "a", Labels: l}
}

func TestOf(t *testing.T) {
	for _, tt := range []struct {
		name, labelName, labelUID string
		want                      Owner
		other                     string
	}{
		{"ours", "fed", "u", Us, ""},
		{"ours from before the UID label", "fed", "", Us, ""},
		{"ours with the name label taken off", "", "u", Us, ""},
		{"the member's own", "", "", Member, ""},
		{"another federation of our name", "fed", "x", Other, `"fed" with UID x`},
		{"another federation's, unnamed", "", "x", Other, `"" with UID x`},
		{"another federation", "other", "u", Other, `"other"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, other := Of(labelled(tt.labelName, tt.labelUID), "fed", "u")
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.other, other)
			assert.Equal(t, tt.want == Us, IsUs(labelled(tt.labelName, tt.labelUID), "fed", "u"))
		})
	}
	got, _ := Of(labelled("fed", "x"), "fed", "")
	assert.Equal(t, Us, got, "our UID not known: our name is enough")
}

func TestOurCopy(t *testing.T) {
	assert.True(t, OurCopy(labelled("fed", "u"), "fed", "u"))
	assert.True(t, OurCopy(labelled("fed", ""), "fed", "u"), "copies from before the UID label")
	assert.True(t, OurCopy(labelled("fed", "x"), "fed", ""), "our UID not known")
	assert.False(t, OurCopy(labelled("fed", "x"), "fed", "u"))
	assert.False(t, OurCopy(labelled("fed", "u"), "other", "u"))
	controlled := labelled("fed", "u")
	controlled.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "d", Controller: ptr.To(true)}}
	assert.False(t, OurCopy(controlled, "fed", "u"), "a ReplicaSet inheriting our label from its Deployment")
}

func TestIsAdopted(t *testing.T) {
	assert.True(t, IsAdopted(&metav1.ObjectMeta{Annotations: map[string]string{federationv1beta1.AdoptedAnnotation: "true"}}))
	assert.False(t, IsAdopted(&metav1.ObjectMeta{}))
}
