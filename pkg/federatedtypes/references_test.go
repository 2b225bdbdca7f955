package federatedtypes

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
		{"an HPA's target", "kind: HorizontalPodAutoscaler\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}", []string{"deployments/web at spec.scaleTargetRef"}, ""},
		{"an HPA of another group's Deployment", "kind: HorizontalPodAutoscaler\nspec: {scaleTargetRef: {apiVersion: other.example.com/v1, kind: Deployment, name: web}}", nil, `spec.scaleTargetRef.apiVersion: "other.example.com/v1" is not the group of the Deployment`},
		{"a ServiceAccount's pull and mount Secrets", "kind: ServiceAccount\nimagePullSecrets: [{name: pull}]\nsecrets: [{name: token}]", []string{"secrets/pull at imagePullSecrets[0].name (optional)", "secrets/token at secrets[0].name (optional)"}, ""},
		{"an HPA of a kind never divided", "kind: HorizontalPodAutoscaler\nspec: {scaleTargetRef: {kind: Widget, name: w}}", nil, `Widget "w" is not a kind the federation divides`},
		{"a RoleBinding's Role", "kind: RoleBinding\nroleRef: {kind: Role, name: ops}", []string{"roles/ops at roleRef"}, ""},
		{"a RoleBinding's ClusterRole", "kind: RoleBinding\nroleRef: {kind: ClusterRole, name: edit}", nil, ""},
		{"a ConfigMap", "kind: ConfigMap\ndata: {serviceAccountName: robot}", nil, ""},

		// What pods use.
		{"a secret volume", "kind: Deployment\nspec: {template: {spec: {volumes: [{name: a, emptyDir: {}}, {name: b, secret: {secretName: tls}}]}}}",
			[]string{"secrets/tls at spec.template.spec.volumes[1].secret.secretName"}, ""},
		{"an optional secret volume", "kind: Pod\nspec: {volumes: [{name: b, secret: {secretName: tls, optional: true}}]}",
			[]string{"secrets/tls at spec.volumes[0].secret.secretName (optional)"}, ""},
		{"optional: false is not optional", "kind: Pod\nspec: {volumes: [{name: b, secret: {secretName: tls, optional: false}}]}",
			[]string{"secrets/tls at spec.volumes[0].secret.secretName"}, ""},
		{"projected sources", "kind: Pod\nspec: {volumes: [{name: p, projected: {sources: [{serviceAccountToken: {path: t}}, {secret: {name: s, optional: true}}, {configMap: {name: c}}]}}]}",
			[]string{"secrets/s at spec.volumes[0].projected.sources[1].secret.name (optional)", "configmaps/c at spec.volumes[0].projected.sources[2].configMap.name"}, ""},
		{"a configMap volume", "kind: DaemonSet\nspec: {template: {spec: {volumes: [{name: c, configMap: {name: settings, optional: true}}]}}}",
			[]string{"configmaps/settings at spec.template.spec.volumes[0].configMap.name (optional)"}, ""},
		{"kube-root-ca.crt is every member's own", "kind: Pod\nspec: {volumes: [{name: c, configMap: {name: kube-root-ca.crt}}, {name: p, projected: {sources: [{configMap: {name: kube-root-ca.crt}}]}}], " +
			"containers: [{name: c, env: [{name: E, valueFrom: {configMapKeyRef: {name: kube-root-ca.crt, key: ca.crt}}}], envFrom: [{configMapRef: {name: kube-root-ca.crt}}]}]}",
			nil, ""},
		{"a Secret of that name is not exempt", "kind: Pod\nspec: {volumes: [{name: c, secret: {secretName: kube-root-ca.crt}}]}",
			[]string{"secrets/kube-root-ca.crt at spec.volumes[0].secret.secretName"}, ""},
		{"a claim", "kind: StatefulSet\nspec: {template: {spec: {volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}}}",
			[]string{"persistentvolumeclaims/data at spec.template.spec.volumes[0].persistentVolumeClaim.claimName"}, ""},
		{"an ephemeral volume's claim is the member's own", "kind: Pod\nspec: {volumes: [{name: e, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}]}", nil, ""},
		{"but what it clones is named", "kind: Pod\nspec: {volumes: [{name: e, ephemeral: {volumeClaimTemplate: {spec: {dataSource: {kind: PersistentVolumeClaim, name: golden}}}}}]}",
			[]string{"persistentvolumeclaims/golden at spec.volumes[0].ephemeral.volumeClaimTemplate.spec.dataSource"}, ""},
		{"an ephemeral volume of a snapshot", "kind: Pod\nspec: {volumes: [{name: e, ephemeral: {volumeClaimTemplate: {spec: {dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: s}}}}}]}",
			nil, `spec.volumes[0].ephemeral.volumeClaimTemplate.spec.dataSource: snapshot.storage.k8s.io/VolumeSnapshot "s" is not a kind the federation propagates`},
		{"an ephemeral volume bound to a volume", "kind: Pod\nspec: {volumes: [{name: e, ephemeral: {volumeClaimTemplate: {spec: {volumeName: pv-1}}}}]}",
			nil, `spec.volumes[0].ephemeral.volumeClaimTemplate.spec.volumeName: binds the member's PersistentVolume "pv-1"`},
		{"a StatefulSet's claim template of a snapshot", "kind: StatefulSet\nmetadata: {name: db}\nspec: {volumeClaimTemplates: [{metadata: {name: data}, spec: {dataSourceRef: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: s}}}]}",
			nil, `spec.volumeClaimTemplates[0].spec.dataSourceRef: snapshot.storage.k8s.io/VolumeSnapshot "s" is not a kind`},
		{"a StatefulSet's claim template cloning a claim", "kind: StatefulSet\nmetadata: {name: db}\nspec: {volumeClaimTemplates: [{metadata: {name: data}, spec: {dataSource: {kind: PersistentVolumeClaim, name: golden}}}]}",
			[]string{"persistentvolumeclaims/golden at spec.volumeClaimTemplates[0].spec.dataSource"}, ""},
		{"env and envFrom", "kind: Job\nspec: {template: {spec: {containers: [{name: c, env: [{name: A, value: x}, {name: B, valueFrom: {secretKeyRef: {name: s1, key: k}}}, {name: C, valueFrom: {configMapKeyRef: {name: c1, key: k, optional: true}}}], " +
			"envFrom: [{secretRef: {name: s2, optional: true}}, {configMapRef: {name: c2}}]}]}}}",
			[]string{"secrets/s1 at spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name",
				"configmaps/c1 at spec.template.spec.containers[0].env[2].valueFrom.configMapKeyRef.name (optional)",
				"secrets/s2 at spec.template.spec.containers[0].envFrom[0].secretRef.name (optional)",
				"configmaps/c2 at spec.template.spec.containers[0].envFrom[1].configMapRef.name"}, ""},
		{"initContainers", "kind: ReplicaSet\nspec: {template: {spec: {initContainers: [{name: i, envFrom: [{secretRef: {name: init}}]}]}}}",
			[]string{"secrets/init at spec.template.spec.initContainers[0].envFrom[0].secretRef.name"}, ""},
		{"ephemeralContainers", "kind: Pod\nspec: {ephemeralContainers: [{name: debug, env: [{name: T, valueFrom: {secretKeyRef: {name: token, key: t}}}]}]}",
			[]string{"secrets/token at spec.ephemeralContainers[0].env[0].valueFrom.secretKeyRef.name"}, ""},
		{"a CronJob's containers", "kind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: {containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]}}}}}",
			[]string{"configmaps/cfg at spec.jobTemplate.spec.template.spec.containers[0].envFrom[0].configMapRef.name"}, ""},
		{"a ReplicationController's image pull secrets", "kind: ReplicationController\nspec: {template: {spec: {imagePullSecrets: [{name: registry}]}}}",
			[]string{"secrets/registry at spec.template.spec.imagePullSecrets[0].name"}, ""},
		{"volume plugins' secrets", "kind: Pod\nspec: {volumes: [" +
			"{name: a, csi: {driver: d, nodePublishSecretRef: {name: csi}}}, " +
			"{name: b, cephfs: {monitors: [m], secretRef: {name: ceph}}}, " +
			"{name: c, rbd: {monitors: [m], image: i, secretRef: {name: rbd}}}, " +
			"{name: d, iscsi: {targetPortal: p, iqn: q, lun: 0, secretRef: {name: chap}}}, " +
			"{name: e, flexVolume: {driver: d, secretRef: {name: flex}}}, " +
			"{name: f, azureFile: {secretName: azure, shareName: s}}, " +
			"{name: g, scaleIO: {gateway: g, system: s, secretRef: {name: scaleio}}}, " +
			"{name: h, storageos: {volumeName: v, secretRef: {name: storageos}}}, " +
			"{name: i, cinder: {volumeID: v, secretRef: {name: cinder}}}]}",
			[]string{
				"secrets/csi at spec.volumes[0].csi.nodePublishSecretRef.name",
				"secrets/ceph at spec.volumes[1].cephfs.secretRef.name",
				"secrets/rbd at spec.volumes[2].rbd.secretRef.name",
				"secrets/chap at spec.volumes[3].iscsi.secretRef.name",
				"secrets/flex at spec.volumes[4].flexVolume.secretRef.name",
				"secrets/azure at spec.volumes[5].azureFile.secretName",
				"secrets/scaleio at spec.volumes[6].scaleIO.secretRef.name",
				"secrets/storageos at spec.volumes[7].storageos.secretRef.name",
				"secrets/cinder at spec.volumes[8].cinder.secretRef.name",
			}, ""},
		{"one reference per object, at its first field", "kind: Pod\nspec: {serviceAccountName: robot, serviceAccount: robot, volumes: [{name: a, secret: {secretName: s}}], " +
			"containers: [{name: c, envFrom: [{secretRef: {name: s}}, {configMapRef: {name: s}}]}], imagePullSecrets: [{name: s}]}",
			[]string{"serviceaccounts/robot at spec.serviceAccountName", "secrets/s at spec.volumes[0].secret.secretName", "configmaps/s at spec.containers[0].envFrom[1].configMapRef.name"}, ""},
		{"optional only if every use is", "kind: Pod\nspec: {volumes: [{name: a, secret: {secretName: s, optional: true}}], " +
			"containers: [{name: c, envFrom: [{secretRef: {name: s}}, {configMapRef: {name: m, optional: true}}]}, {name: d, envFrom: [{configMapRef: {name: m, optional: true}}]}]}",
			[]string{"secrets/s at spec.volumes[0].secret.secretName", "configmaps/m at spec.containers[0].envFrom[1].configMapRef.name (optional)"}, ""},
		{"a pod spec that cannot be read", "kind: Deployment\nspec: {template: {spec: {volumes: secret}}}", nil, "spec.template.spec: cannot restore slice from string"},
		{"a pod spec that is no object", "kind: Deployment\nspec: {template: {spec: [a]}}", nil, "spec.template.spec: is a []interface {}, not an object"},

		// Claims.
		{"a claim cloning a claim", "kind: PersistentVolumeClaim\nspec: {dataSource: {kind: PersistentVolumeClaim, name: golden}, dataSourceRef: {kind: PersistentVolumeClaim, name: golden}}",
			[]string{"persistentvolumeclaims/golden at spec.dataSource"}, ""},
		{"a claim cloning a claim by dataSourceRef", "kind: PersistentVolumeClaim\nspec: {dataSourceRef: {apiGroup: '', kind: PersistentVolumeClaim, name: golden}}",
			[]string{"persistentvolumeclaims/golden at spec.dataSourceRef"}, ""},
		{"a plain claim", "kind: PersistentVolumeClaim\nspec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}", nil, ""},
		{"a full pod spec reads", "kind: Deployment\nspec: {template: {spec: {containers: [{name: c, image: i, ports: [{containerPort: 80}], resources: {limits: {cpu: 100m, memory: 1Gi}}, " +
			"securityContext: {runAsUser: 1000}}], terminationGracePeriodSeconds: 30, volumes: [{name: e, emptyDir: {sizeLimit: 1Gi}}], tolerations: [{key: k, operator: Exists}]}}}", nil, ""},
		{"a claim of a snapshot", "kind: PersistentVolumeClaim\nspec: {dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: nightly}}",
			nil, `spec.dataSource: snapshot.storage.k8s.io/VolumeSnapshot "nightly" is not a kind the federation propagates, so the copy cannot name it`},
		{"a claim of a populator", "kind: PersistentVolumeClaim\nspec: {dataSourceRef: {apiGroup: hello.example.com, kind: Hello, name: h}}",
			nil, `spec.dataSourceRef: hello.example.com/Hello "h" is not a kind`},
		{"a claim of another group's PersistentVolumeClaim", "kind: PersistentVolumeClaim\nspec: {dataSourceRef: {apiGroup: x.example.com, kind: PersistentVolumeClaim, name: h}}",
			nil, `spec.dataSourceRef: x.example.com/PersistentVolumeClaim "h" is not a kind`},
		{"a claim of another namespace's claim", "kind: PersistentVolumeClaim\nspec: {dataSourceRef: {kind: PersistentVolumeClaim, name: golden, namespace: team-b}}",
			nil, `spec.dataSourceRef.namespace: the claim "golden" of namespace "team-b"`},
		{"a claim bound to a volume", "kind: PersistentVolumeClaim\nspec: {volumeName: pv-7}",
			nil, `spec.volumeName: binds the member's PersistentVolume "pv-7", which the federation never propagates`},
		{"a claim picking volumes by label", "kind: PersistentVolumeClaim\nspec: {selector: {matchLabels: {team: b}}}",
			nil, `spec.selector: picks the member's PersistentVolumes by label`},
		{"a StatefulSet's claim template picking volumes", "kind: StatefulSet\nmetadata: {name: db}\nspec: {volumeClaimTemplates: [{metadata: {name: data}, spec: {selector: {matchExpressions: [{key: team, operator: Exists}]}}}]}",
			nil, `spec.volumeClaimTemplates[0].spec.selector: picks the member's PersistentVolumes by label`},

		// Devices and scheduling groups.
		{"a pod's ResourceClaim", "kind: Deployment\nspec: {template: {spec: {resourceClaims: [{name: gpu, resourceClaimName: team-b-gpu}]}}}",
			nil, `spec.template.spec.resourceClaims[0].resourceClaimName: resource.k8s.io/ResourceClaim "team-b-gpu" is not a kind the federation propagates`},
		{"a pod's ResourceClaimTemplate", "kind: Pod\nspec: {resourceClaims: [{name: gpu, resourceClaimTemplateName: gpus}]}",
			nil, `spec.resourceClaims[0].resourceClaimTemplateName: resource.k8s.io/ResourceClaimTemplate "gpus" is not a kind`},
		{"a pod's PodGroup", "kind: Job\nspec: {template: {spec: {schedulingGroup: {podGroupName: batch}}}}",
			nil, `spec.template.spec.schedulingGroup.podGroupName: scheduling.k8s.io/PodGroup "batch" is not a kind`},

		// ExternalName Services.
		{"an alias to a Service of its namespace", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: web.team-a.svc.cluster.local}",
			[]string{"services/web at spec.externalName (optional)"}, ""},
		{"to a headless Service's pod", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: DB-0.db.Team-A.svc.}",
			[]string{"services/db at spec.externalName (optional)"}, ""},
		{"an alias to another namespace's Service", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: payments.team-b.svc}",
			nil, `spec.externalName: "payments.team-b.svc" is the Service "payments" of namespace "team-b"`},
		{"a relative two-label name is read as outside (example.com)", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: example.com}", nil, ""},
		{"one label: the reader's own namespace", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: payments}",
			nil, `spec.externalName: "payments" is one label, which each reader resolves`},
		{"localhost is every resolver's own", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: localhost}", nil, ""},
		{"an absolute two-label name is outside", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: payments.team-b.}", nil, ""},
		{"an alias outside the cluster", "kind: Service\nmetadata: {namespace: team-a}\nspec: {type: ExternalName, externalName: db.example.com}", nil, ""},
		{"a ClusterIP Service names nothing", "kind: Service\nmetadata: {namespace: team-a}\nspec: {externalName: payments.team-b.svc}", nil, ""},

		// Ingresses.
		{"an Ingress's Secrets and Services", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nspec: {tls: [{hosts: [a]}, {secretName: cert}], defaultBackend: {service: {name: fallback, port: {number: 80}}}, " +
			"rules: [{host: a}, {http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}, {path: /b, pathType: Prefix, backend: {service: {name: fallback, port: {number: 80}}}}]}}]}",
			[]string{"secrets/cert at spec.tls[1].secretName", "services/fallback at spec.defaultBackend.service.name (optional)", "services/web at spec.rules[1].http.paths[0].backend.service.name (optional)"}, ""},
		{"an Ingress's default resource backend", "kind: Ingress\nspec: {defaultBackend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: b}}}",
			nil, `spec.defaultBackend.resource: k8s.example.com/StorageBucket "b" is not a kind the federation propagates`},
		{"an Ingress path's resource backend", "kind: Ingress\nspec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web}}}, {path: /s, pathType: Prefix, backend: {resource: {kind: Secret, name: s}}}]}}]}",
			nil, `spec.rules[0].http.paths[1].backend.resource: Secret "s" is not a kind`},
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
				s := r.Resource.Resource + "/" + r.Name + " at " + r.Field
				if r.Optional {
					s += " (optional)"
				}
				got = append(got, s)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReferencesKinds(t *testing.T) {
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte("kind: Ingress\nspec: {tls: [{secretName: cert}], defaultBackend: {service: {name: web}}}"), &obj.Object))
	refs, err := References(obj)
	require.NoError(t, err)
	require.Len(t, refs, 2)
	assert.Equal(t, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, refs[0].Resource)
	assert.Equal(t, "Secret", refs[0].Kind)
	assert.Equal(t, schema.GroupVersionResource{Version: "v1", Resource: "services"}, refs[1].Resource)
	assert.Equal(t, "Service", refs[1].Kind)
}

func TestStatefulSetClaimPrefixes(t *testing.T) {
	for _, tt := range []struct {
		name, manifest string
		want           []string
	}{
		{"each template", "kind: StatefulSet\nmetadata: {name: db}\nspec: {volumeClaimTemplates: [{metadata: {name: data}}, {metadata: {name: logs}}]}", []string{"data-db-", "logs-db-"}},
		{"no templates", "kind: StatefulSet\nmetadata: {name: db}\nspec: {}", nil},
		{"a template without a name", "kind: StatefulSet\nmetadata: {name: db}\nspec: {volumeClaimTemplates: [{spec: {}}]}", nil},
		{"another kind", "kind: Deployment\nmetadata: {name: db}\nspec: {volumeClaimTemplates: [{metadata: {name: data}}]}", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(tt.manifest), &obj.Object))
			assert.Equal(t, tt.want, StatefulSetClaimPrefixes(obj))
		})
	}
}

func TestACopyNamesABoundedNumberOfObjects(t *testing.T) {
	env := make([]any, 0, MaxReferences+1)
	for i := 0; i <= MaxReferences; i++ {
		env = append(env, map[string]any{"name": fmt.Sprintf("E%d", i), "valueFrom": map[string]any{
			"secretKeyRef": map[string]any{"name": fmt.Sprintf("s%d", i), "key": "k", "optional": true}}})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "env": env}}}}}}}
	_, err := References(obj)
	require.ErrorContains(t, err, "spec.template.spec.containers[0].env[100].valueFrom.secretKeyRef.name: names more than 100")
	obj.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"] = env[:MaxReferences]
	refs, err := References(obj)
	require.NoError(t, err)
	assert.Len(t, refs, MaxReferences)
}
