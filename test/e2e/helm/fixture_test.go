package helm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	accounts    = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	three       = []string{"cluster1", "cluster2", "cluster3"}
)

// converge bounds how long propagation to the members may take here.
const converge = 90 * time.Second

// helmTimeout is what every helm --wait is given; each step must finish
// well inside it.
const helmTimeout = 3 * time.Minute

// fixture is a federation "fed" joined to three member clusters, and Helm.
type fixture struct {
	fedenv.Fixture
	env  *memberenv.Environment
	helm string
	// helmHome keeps Helm's cache, configuration and data out of $HOME.
	helmHome string
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// runHelm runs the real helm with the user's kubeconfig and returns its
// combined output and how long it took.
func (f *fixture) runHelm(args ...string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), helmTimeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.helm, append([]string{"--kubeconfig", f.User.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+f.User.Home,
		"HELM_CACHE_HOME="+filepath.Join(f.helmHome, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(f.helmHome, "config"),
		"HELM_DATA_HOME="+filepath.Join(f.helmHome, "data"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return string(out), time.Since(start), err
}

// mustHelm runs helm, fails the test when it fails, and logs how long it
// took.
func (f *fixture) mustHelm(args ...string) string {
	f.T.Helper()
	out, took, err := f.runHelm(args...)
	require.NoError(f.T, err, "helm %s (after %s):\n%s", strings.Join(args, " "), took.Round(time.Millisecond), out)
	f.T.Logf("helm %s took %s", args[0], took.Round(time.Millisecond))
	if slices.Contains(args, "--wait") {
		// Well inside its timeout: nothing waited for something that
		// never comes at the federation.
		require.Less(f.T, took, helmTimeout/3, "helm %s --wait", args[0])
	}
	return out
}

// helmListsOnlyAtTheFederation checks with the real `helm list` that the
// release is the federation's and no member's.
func (f *fixture) helmListsOnlyAtTheFederation(ns, release string) {
	f.T.Helper()
	require.Contains(f.T, strings.Fields(f.mustHelm("list", "--kube-context=fed", "-n", ns, "-q")), release)
	for _, c := range three {
		require.NotContains(f.T, strings.Fields(f.mustHelm("list", "--kube-context="+c, "-A", "-q")), release, "helm list in %s", c)
	}
}

// waitMembers waits until check accepts the object in the members (nil
// where it is not there); a timeout says what the members last held.
func (f *fixture) waitMembers(gvr schema.GroupVersionResource, ns, name, what string, check func(objs map[string]*unstructured.Unstructured) error) {
	f.T.Helper()
	var seen error
	err := poll.Until(context.Background(), converge, fmt.Sprintf("%s %s/%s in the members: %s", gvr.Resource, ns, name, what), func(ctx context.Context) error {
		objs := map[string]*unstructured.Unstructured{}
		for _, c := range three {
			obj, err := f.MemberObject(ctx, c, gvr, ns, name)
			if err != nil {
				return err
			}
			objs[c] = obj
		}
		seen = check(objs)
		return seen
	})
	require.NoError(f.T, err, "last seen: %v", seen)
}

// eachMember adapts a check of one member's object to waitMembers.
func eachMember(check func(obj *unstructured.Unstructured) error) func(map[string]*unstructured.Unstructured) error {
	return func(objs map[string]*unstructured.Unstructured) error {
		for _, c := range three {
			if err := check(objs[c]); err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
		}
		return nil
	}
}

// waitGone waits until no member has the object.
func (f *fixture) waitGone(gvr schema.GroupVersionResource, ns, name string) {
	f.T.Helper()
	f.waitMembers(gvr, ns, name, "gone", eachMember(func(obj *unstructured.Unstructured) error {
		if obj != nil {
			return fmt.Errorf("still there")
		}
		return nil
	}))
}

// noReleaseInMembers checks that no member holds a Helm release Secret in
// ns, and that the federation holds at least one (so the check means
// something while a release is installed).
func (f *fixture) noReleaseInMembers(ns string, atFederation bool) {
	f.T.Helper()
	ctx := context.Background()
	for _, c := range three {
		client, err := f.Clients.Dynamic(c)
		require.NoError(f.T, err)
		list, err := client.Resource(secrets).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=" + federatedtypes.HelmReleaseSecretType})
		require.NoError(f.T, err)
		var names []string
		for _, s := range list.Items {
			names = append(names, s.GetName())
		}
		require.Empty(f.T, names, "Helm release Secrets in %s", c)
	}
	if atFederation {
		out := f.Kubectl("-n", ns, "get", "secrets", "--field-selector=type="+federatedtypes.HelmReleaseSecretType, "-o", "name")
		require.Contains(f.T, out, "secret/sh.helm.release.v1.", "the release is recorded at the federation")
	}
}
