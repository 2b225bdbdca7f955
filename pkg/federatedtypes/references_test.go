package federatedtypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestReferencesAreWhatACopyActsThrough(t *testing.T) {
	for _, tt := range []struct {
		name, manifest string
		want           []string
		err            string
	}{
		{"a Deployment's service account", "kind: Deployment\nspec: {template: {spec: {serviceAccountName: robot}}}", []string{"serviceaccounts/robot at spec.template.spec.serviceAccountName"}, ""},
		{"the deprecated field too", "kind: StatefulSet\nspec: {template: {spec: {serviceAccount: ci}}}", []string{"serviceaccounts/ci at spec.template.spec.serviceAccount"}, ""},
		{"a CronJob's", "kind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: {serviceAccountName: robot}}}}}", []string{"serviceaccounts/robot at spec.jobTemplate.spec.template.spec.serviceAccountName"}, ""},
		{"the default account is every namespace's own", "kind: Deployment\nspec: {template: {spec: {serviceAccountName: default}}}", nil, ""},
		{"no account", "kind: Job\nspec: {template: {spec: {}}}", nil, ""},
		{"a token Secret's account", "kind: Secret\ntype: kubernetes.io/service-account-token\nmetadata: {annotations: {kubernetes.io/service-account.name: default}}", []string{"serviceaccounts/default at metadata.annotations[kubernetes.io/service-account.name]"}, ""},
		{"an Opaque Secret", "kind: Secret\nmetadata: {annotations: {kubernetes.io/service-account.name: robot}}", nil, ""},
		{"an HPA's target", "kind: HorizontalPodAutoscaler\nspec: {scaleTargetRef: {kind: Deployment, name: web}}", []string{"deployments/web at spec.scaleTargetRef"}, ""},
		{"an HPA of a kind never divided", "kind: HorizontalPodAutoscaler\nspec: {scaleTargetRef: {kind: Widget, name: w}}", nil, `Widget "w" is not a kind the federation divides`},
		{"a RoleBinding's Role", "kind: RoleBinding\nroleRef: {kind: Role, name: ops}", []string{"roles/ops at roleRef"}, ""},
		{"a RoleBinding's ClusterRole", "kind: RoleBinding\nroleRef: {kind: ClusterRole, name: edit}", nil, ""},
		{"a ConfigMap", "kind: ConfigMap\ndata: {serviceAccountName: robot}", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(tt.manifest), &obj.Object))
			refs, err := References(obj)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, r := range refs {
				got = append(got, r.Resource.Resource+"/"+r.Name+" at "+r.Field)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
