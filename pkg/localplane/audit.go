package localplane

// Files of the apiserver's audit log, relative to the plane's folder.
const (
	// auditPolicyFile is the apiserver's --audit-policy-file: written once
	// at init, so that a person may edit it and keep the edit.
	auditPolicyFile = "audit-policy.yaml"
	// auditLogFile is the apiserver's --audit-log-path, beside the
	// programs' logs.
	auditLogFile = "logs/audit.log"
	// auditLogMaxBackups bounds the disk the log takes on a person's
	// machine: 100 MB files (the default size), this many kept.
	auditLogMaxBackups = 5
)

// auditPolicy is the default audit policy (audit.k8s.io/v1; the first rule
// that matches a request decides its level). Secrets never get past
// Metadata, so that no Secret's body reaches the log.
const auditPolicy = `# Written by kubefed init: what federation-apiserver records in logs/audit.log.
# The first rule that matches a request decides its level.
apiVersion: audit.k8s.io/v1
kind: Policy
# The ResponseComplete event says all that RequestReceived does.
omitStages:
- RequestReceived
rules:
# Probes and discovery are frequent and say nothing of who changed what.
- level: None
  verbs: ["get"]
  nonResourceURLs:
  - /healthz*
  - /livez*
  - /readyz*
  - /version
  - /version/*
  - /api
  - /api/*
  - /apis
  - /apis/*
  - /openapi/*
# Events are records themselves, and the apiserver keeping its own
# bootstrap roles in place at every start is not a change anyone made.
- level: None
  resources:
  - group: ""
    resources: ["events"]
  - group: events.k8s.io
    resources: ["events"]
- level: None
  users: ["system:apiserver"]
# The controller managers' leader election renews its Lease every few
# seconds, and a standby reads it as often.
- level: None
  users: ["system:federation-controller-manager"]
  namespaces: ["federation-system"]
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
# The controller manager's own writes (finalizers, status, Cluster
# health) are frequent and follow what people did: who and what only.
- level: Metadata
  users: ["system:federation-controller-manager"]
# Their bodies hold secrets (Secrets, member credentials, tokens): who and
# what only.
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps"]
  - group: authentication.k8s.io
    resources: ["tokenreviews"]
# Changes, with what was asked.
- level: Request
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  omitManagedFields: true
# Everything else: who did what, without bodies.
- level: Metadata
`

// writeAuditPolicy writes the default audit policy, unless one is there.
func (p *Plane) writeAuditPolicy() error {
	return writeOnce(p.path(auditPolicyFile), []byte(auditPolicy), 0o600)
}
