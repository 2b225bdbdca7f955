package karmadaenv

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
)

// fieldManager owns what this package applies.
const fieldManager = "karmadaenv"

// The host Karmada's manifests address its webhook at, replaced by loopback.
const webhookServiceURL = "https://karmada-webhook.karmada-system.svc:443"

var (
	crdResource        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// kustomization is the part of Karmada's CRD kustomization read here.
type kustomization struct {
	Resources []string `json:"resources"`
	Patches   []struct {
		Path string `json:"path"`
	} `json:"patches"`
}

func (p *Plane) readKustomization() (kustomization, string, error) {
	var k kustomization
	path := filepath.Join(p.opts.KarmadaSrc, crdKustomization)
	b, err := os.ReadFile(path)
	if err != nil {
		return k, "", err
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		return k, "", fmt.Errorf("reading %s: %w", path, err)
	}
	return k, filepath.Dir(path), nil
}

// installCRDs applies Karmada's namespace and CRDs and waits until every
// CRD is established.
func (p *Plane) installCRDs(ctx context.Context) error {
	if err := p.applyFile(ctx, namespaceManifest, nil, nil); err != nil {
		return err
	}
	k, dir, err := p.readKustomization()
	if err != nil {
		return err
	}
	var names []string
	for _, r := range k.Resources {
		objs, err := readObjects(filepath.Join(dir, r), nil)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := p.apply(ctx, o); err != nil {
				return err
			}
			names = append(names, o.GetName())
		}
	}
	dyn, err := p.dynamic()
	if err != nil {
		return err
	}
	return poll.Until(ctx, time.Minute, "Karmada's CRDs established", func(ctx context.Context) error {
		for _, name := range names {
			crd, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !conditionTrue(crd, "Established") {
				return fmt.Errorf("CRD %s not established yet", name)
			}
		}
		return nil
	})
}

// startAggregatedAPIServer starts karmada-aggregated-apiserver, registers
// it with its APIService (the Service an ExternalName for localhost, on the
// program's port) and waits until the APIService is available.
func (p *Plane) startAggregatedAPIServer(ctx context.Context) error {
	url := fmt.Sprintf("https://%s/readyz", addr(p.Ports[AggregatedAPIServer]))
	if err := p.startAndWait(ctx, AggregatedAPIServer, url); err != nil {
		return err
	}
	ca := base64.StdEncoding.EncodeToString(p.caPEM)
	err := p.applyFile(ctx, apiServiceManifest, strings.NewReplacer("{{caBundle}}", ca), func(o *unstructured.Unstructured) error {
		switch o.GetKind() {
		case "Service":
			return unstructured.SetNestedField(o.Object, "localhost", "spec", "externalName")
		case "APIService":
			return unstructured.SetNestedField(o.Object, int64(p.Ports[AggregatedAPIServer]), "spec", "service", "port")
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range []string{adminAggregationRBAC, clusterProxyAdminRBAC} {
		if err := p.applyFile(ctx, f, nil, nil); err != nil {
			return err
		}
	}
	dyn, err := p.dynamic()
	if err != nil {
		return err
	}
	return localprocess.WaitFor(ctx, 90*time.Second, "APIService v1alpha1.cluster.karmada.io available", p.Processes[AggregatedAPIServer], func() error {
		s, err := dyn.Resource(apiServiceResource).Get(ctx, "v1alpha1.cluster.karmada.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !conditionTrue(s, "Available") {
			return errors.New("not available yet")
		}
		return nil
	})
}

// startWebhook starts karmada-webhook, then points Karmada's webhook
// configurations and the bindings' conversion at it.
func (p *Plane) startWebhook(ctx context.Context) error {
	// Its readiness is served beside the webhooks, as its manifest probes it.
	if err := p.startAndWait(ctx, Webhook, fmt.Sprintf("https://%s/readyz/", addr(p.Ports[Webhook]))); err != nil {
		return err
	}
	local := "https://" + addr(p.Ports[Webhook])
	replace := strings.NewReplacer(webhookServiceURL, local, "https://{{name}}.{{namespace}}.svc:443", local,
		"{{caBundle}}", base64.StdEncoding.EncodeToString(p.caPEM))
	if err := p.applyFile(ctx, webhookManifest, replace, nil); err != nil {
		return err
	}
	k, dir, err := p.readKustomization()
	if err != nil {
		return err
	}
	dyn, err := p.dynamic()
	if err != nil {
		return err
	}
	for _, patch := range k.Patches {
		objs, err := readObjects(filepath.Join(dir, patch.Path), replace)
		if err != nil {
			return err
		}
		for _, o := range objs {
			body, err := o.MarshalJSON()
			if err != nil {
				return err
			}
			if _, err := dyn.Resource(crdResource).Patch(ctx, o.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
				return fmt.Errorf("patching CRD %s with %s: %w", o.GetName(), patch.Path, err)
			}
		}
	}
	return nil
}

// readObjects reads the objects of a YAML file, after replace.
func readObjects(path string, replace *strings.Replacer) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if replace != nil {
		b = []byte(replace.Replace(string(b)))
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// applyFile applies the objects of a file of Karmada's source tree.
func (p *Plane) applyFile(ctx context.Context, rel string, replace *strings.Replacer, edit func(*unstructured.Unstructured) error) error {
	objs, err := readObjects(filepath.Join(p.opts.KarmadaSrc, rel), replace)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if edit != nil {
			if err := edit(o); err != nil {
				return err
			}
		}
		if err := p.apply(ctx, o); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
	}
	return nil
}

func (p *Plane) dynamic() (dynamic.Interface, error) {
	cfg, err := p.RESTConfig()
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// apply server-side applies one object, finding its resource by discovery.
func (p *Plane) apply(ctx context.Context, o *unstructured.Unstructured) error {
	client, err := p.Client()
	if err != nil {
		return err
	}
	dyn, err := p.dynamic()
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	gvk := o.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		ri = dyn.Resource(mapping.Resource).Namespace(ns)
	}
	body, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("applying %s %s: %w", gvk.Kind, o.GetName(), err)
	}
	return nil
}

// conditionTrue tells whether an object's status holds condition typ True.
func conditionTrue(o *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
