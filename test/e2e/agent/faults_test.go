package agent_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// faultBurst is the size of a fault case's burst, and strikeAfter the
// writes acknowledged when the fault strikes.
const (
	faultBurst  = 300
	strikeAfter = 100
)

// burstWithFault writes faultBurst ConfigMaps in namespace ns at the
// federation (retrying what fails while the fault lasts, as the fault
// matrix's writer does), strikes after strikeAfter acknowledged writes,
// undoes the fault once every write is acknowledged, and checks that each
// of members then holds exactly the burst's copies: none lost, none extra.
func burstWithFault(t *testing.T, fed kubernetes.Interface, f fedenv.Fixture, members []string, ns string, strike, undo func()) {
	ctx := context.Background()
	_, err := fed.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	names := make([]string, faultBurst)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%04d", i)
	}
	var acknowledged, retries atomic.Int64
	struck := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i, name := range names {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"i": fmt.Sprint(i)}}
			err := poll.Until(ctx, 2*time.Minute, "creating "+name, func(ctx context.Context) error {
				_, err := fed.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					retries.Add(1)
					return err
				}
				return nil
			})
			if err != nil {
				done <- err
				return
			}
			if acknowledged.Add(1) == strikeAfter {
				close(struck)
			}
		}
		done <- nil
	}()
	<-struck
	start := time.Now()
	strike()
	require.NoError(t, <-done)
	undo()
	require.NoError(t, poll.Until(ctx, 3*time.Minute, fmt.Sprintf("exactly the %d copies in every member", faultBurst), func(ctx context.Context) error {
		for _, c := range members {
			list, err := f.Member(c).Resource(configMaps).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: federationv1beta1.FederationLabel})
			if err != nil {
				return err
			}
			var got []string
			for _, o := range list.Items {
				got = append(got, o.GetName())
			}
			slices.Sort(got)
			if !slices.Equal(got, names) {
				return fmt.Errorf("%s holds %d copies", c, len(got))
			}
		}
		return nil
	}))
	t.Logf("%s: %d writes (%d retried), every copy in place %s after the fault struck", ns, faultBurst, retries.Load(), time.Since(start).Round(100*time.Millisecond))
}

// federationClient is the admin's client of the federation of context.
func federationClient(t *testing.T, u *fedenv.User, context string) kubernetes.Interface {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	require.NoError(t, err)
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return client
}
