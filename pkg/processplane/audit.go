package processplane

import "github.com/federation-v1/federation/deploy"

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

// auditPolicyPath is the default audit policy (audit.k8s.io/v1; the first
// rule that matches a request decides its level), in the Helm chart so that
// a local plane and one in a cluster record the same. Secrets never get past
// Metadata, so that no Secret's body reaches the log.
const auditPolicyPath = "charts/federation/files/audit-policy.yaml"

// writeAuditPolicy writes the default audit policy, unless one is there.
func (p *Plane) writeAuditPolicy() error {
	policy, err := deploy.Chart.ReadFile(auditPolicyPath)
	if err != nil {
		return err
	}
	return writeOnce(p.path(auditPolicyFile), policy, 0o600)
}
