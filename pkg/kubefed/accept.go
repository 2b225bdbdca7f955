package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/agentcerts"
)

// acceptOptions are the options of `kubefed accept`.
type acceptOptions struct {
	*globalFlags
	cluster, federation string
	now                 func() time.Time
}

func newAcceptCommand(g *globalFlags) *cobra.Command {
	o := &acceptOptions{globalFlags: g, now: time.Now}
	cmd := &cobra.Command{
		Use:   "accept CLUSTER_NAME --context=FEDERATION",
		Short: "Accept a member cluster's agent: approve its pending certificate request",
		Long: `Accept the agent of member cluster CLUSTER_NAME, registered with a bootstrap token
of kubefed token create without --auto-accept: approve the pending certificate
requests of CLUSTER_NAME's agent made with such a token, by the same rules the
controller manager applies (the request asks for exactly the agent's client
certificate, system:federation:agent:CLUSTER_NAME, with an unexpired token labelled for
CLUSTER_NAME), and delete the token, which is good for one certificate.`,
		Example: `  kubefed accept edge1 --context=fed`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.federation, "context", "", "kubeconfig context of the federation")
	return cmd
}

func (o *acceptOptions) run(ctx context.Context, out io.Writer) error {
	fed, err := o.globalFlags.federation(ctx, o.federation)
	if err != nil {
		return err
	}
	csrs := fed.kube.CertificatesV1().CertificateSigningRequests()
	list, err := csrs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the certificate signing requests: %w", err)
	}
	tokens := func(name string) (*corev1.Secret, error) {
		return fed.kube.CoreV1().Secrets(federationv1beta1.SystemNamespace).Get(ctx, name, metav1.GetOptions{})
	}
	var accepted, refused []string
	used := map[string]bool{}
	for i := range list.Items {
		csr := &list.Items[i]
		if csr.Spec.SignerName != agentcerts.SignerName || !agentcerts.Pending(csr) {
			continue
		}
		v := agentcerts.Judge(csr, tokens, o.now())
		if v.Cluster != o.cluster || v.Action == agentcerts.Ignore {
			continue
		}
		if (v.Action != agentcerts.Wait && v.Action != agentcerts.Approve) || v.TokenSecret == "" {
			refused = append(refused, fmt.Sprintf("%s: %s", csr.Name, v.Message))
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AcceptedByAdmin",
			Message: fmt.Sprintf("cluster %q's agent accepted with kubefed accept", o.cluster), LastUpdateTime: metav1.NewTime(o.now()),
		})
		if _, err := csrs.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("approving certificate request %s of cluster %q: %w", csr.Name, o.cluster, err)
		}
		accepted = append(accepted, csr.Name)
		used[v.TokenSecret] = true
	}
	for name := range used {
		if err := agentcerts.DeleteToken(ctx, fed.kube, name); err != nil {
			return err
		}
	}
	if len(accepted) == 0 {
		msg := fmt.Sprintf("cluster %q has no pending certificate request to accept: has its agent run kubefed register with a token of kubefed token create %s (without --auto-accept)?", o.cluster, o.cluster)
		if len(refused) > 0 {
			msg += " Requests that cannot be accepted: " + strings.Join(refused, "; ")
		}
		return errors.New(msg)
	}
	fmt.Fprintf(out, "Accepted cluster %q: approved certificate request(s) %s; the agent's certificate is issued by the controller manager\n",
		o.cluster, strings.Join(accepted, ", "))
	return nil
}
