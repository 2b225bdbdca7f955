package karmadaenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Karmada's programs, named after their folders under its cmd/.
const (
	AggregatedAPIServer = "aggregated-apiserver"
	ControllerManager   = "controller-manager"
	Scheduler           = "scheduler"
	Webhook             = "webhook"
)

// The programs this package runs besides Karmada's, from the project's
// cached Kubernetes binaries.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "karmada-apiserver"
	KubeControllerManager = "kube-controller-manager"
)

var karmadaPrograms = []string{AggregatedAPIServer, ControllerManager, Scheduler, Webhook}

// crdKustomization lists Karmada's CRDs and the conversion patches of the
// bindings in its source tree.
const crdKustomization = "charts/karmada/_crds/kustomization.yaml"

// The manifests of artifacts/deploy that go into karmada-apiserver.
const (
	namespaceManifest     = "artifacts/deploy/namespace.yaml"
	webhookManifest       = "artifacts/deploy/webhook-configuration.yaml"
	apiServiceManifest    = "artifacts/deploy/karmada-aggregated-apiserver-apiservice.yaml"
	adminAggregationRBAC  = "artifacts/deploy/admin-clusterrole-aggregation.yaml"
	clusterProxyAdminRBAC = "artifacts/deploy/cluster-proxy-admin-rbac.yaml"
)

// Check tells what is missing from bin (Karmada's prebuilt programs) and
// src (a Karmada source tree of the same version). This project builds
// nothing of Karmada: the programs come from the user's own build.
func Check(bin, src string) error {
	var missing []string
	if bin == "" {
		missing = append(missing, "KARMADA_BIN is not set")
	} else {
		for _, p := range karmadaPrograms {
			if st, err := os.Stat(filepath.Join(bin, p)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				missing = append(missing, fmt.Sprintf("no program %s", filepath.Join(bin, p)))
			}
		}
	}
	if src == "" {
		missing = append(missing, "KARMADA_SRC is not set")
	} else {
		for _, f := range []string{crdKustomization, namespaceManifest, webhookManifest, apiServiceManifest} {
			if _, err := os.Stat(filepath.Join(src, f)); err != nil {
				missing = append(missing, fmt.Sprintf("no %s in KARMADA_SRC", f))
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errors.New("karmadaenv: " + strings.Join(missing, "; ") +
		". KARMADA_SRC is a Karmada checkout (v1.18.2) and KARMADA_BIN holds its programs " + strings.Join(karmadaPrograms, ", ") +
		", built from that checkout as its own documentation says (docs/performance.md, Karmada side by side)")
}
