package hostplane

import (
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// Chart is a Helm chart kubefed installs: the federation's, or its agent's
// (in a member).
type Chart struct{ chart *chart.Chart }

// LoadChart reads a chart from the root of fsys.
func LoadChart(fsys fs.FS) (*Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, path)
		files = append(files, &loader.BufferedFile{Name: path, Data: data})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the chart: %w", err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	return &Chart{chart: c}, nil
}

// AppVersion is the chart's appVersion, the image tag it defaults to.
func (c *Chart) AppVersion() string { return c.chart.Metadata.AppVersion }

// Coalesce is values over the chart's defaults, as the templates see them.
func (c *Chart) Coalesce(values map[string]any) (map[string]any, error) {
	v, err := chartutil.CoalesceValues(c.chart, deepCopy(values))
	if err != nil {
		return nil, err
	}
	return v.AsMap(), nil
}

// Render renders the chart as release name in namespace, as `helm install`
// would, and returns its objects in Helm's install order. Hooks (chart
// tests) are left out: they are for `helm test`.
func (c *Chart) Render(name, namespace string, values map[string]any, caps *chartutil.Capabilities) ([]*unstructured.Unstructured, error) {
	top, err := chartutil.ToRenderValues(c.chart, deepCopy(values),
		chartutil.ReleaseOptions{Name: name, Namespace: namespace, Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	// Labels say who manages the objects: kubefed, not a Helm release.
	top["Release"].(map[string]any)["Service"] = FieldManager
	files, err := engine.Render(c.chart, top)
	if err != nil {
		return nil, fmt.Errorf("rendering the chart: %w", err)
	}
	for f := range files {
		if strings.HasSuffix(f, "NOTES.txt") {
			delete(files, f)
		}
	}
	_, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("rendering the chart: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(m.Content), &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// Capabilities are the host's Kubernetes version and APIs, for the
// templates' .Capabilities (whether a ServiceMonitor can be made, say).
func Capabilities(dc discovery.DiscoveryInterface) (*chartutil.Capabilities, error) {
	info, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	versions := chartutil.VersionSet{}
	for _, list := range lists {
		versions = append(versions, list.GroupVersion)
		for _, r := range list.APIResources {
			versions = append(versions, list.GroupVersion+"/"+r.Kind)
		}
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: info.GitVersion, Major: info.Major, Minor: info.Minor}
	caps.APIVersions = versions
	return caps, nil
}
