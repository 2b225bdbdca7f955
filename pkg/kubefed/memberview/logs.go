package memberview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
)

// defaultMaxLogRequests bounds the log streams read at once, as stern's
// --max-log-requests does.
const defaultMaxLogRequests = 50

// logsOptions are the flags of kubefed logs.
type logsOptions struct {
	federationFlags
	namespace      string
	selector       string
	container      string
	maxLogRequests int
	timeout        time.Duration
	logOptions
	target logTarget
}

// NewLogsCommand returns kubefed logs.
func NewLogsCommand(paths ConfigPaths) *cobra.Command {
	o := &logsOptions{federationFlags: federationFlags{paths: paths}}
	cmd := &cobra.Command{
		Use:   "logs (POD | TYPE/NAME | -l SELECTOR) --context=FEDERATION [-c CONTAINER] [-f] [--tail=N] [--since=DURATION] [--cluster=NAME ...]",
		Short: "Print the logs of pods in every member cluster, through the federation",
		Long: `Print the logs of pods in every member cluster at once, through the federation
apiserver's proxy with your own federation credential, each line prefixed with
[CLUSTER/POD] ([CLUSTER/POD/CONTAINER] when a pod's several containers are read).

The pods are a pod's name (in whichever members have it), TYPE/NAME for the
pods of a workload in each member (deploy, rs, sts, ds, job, svc: the member's
own object's selector), or -l SELECTOR. Without -c, every container of each pod.
Without -f each stream ends at the end of the log; with -f they follow until
Ctrl-C. At most --max-log-requests streams are read at once; with -f, more
matching streams than that is refused, so that none is silently left out.`,
		Example: `  # Follow every pod of Deployment web in every member
  kubefed logs deploy/web -f -n team-a --context=fed

  # The last 20 lines of container app of the pods labelled app=web, in cluster2
  kubefed logs -l app=web -c app --tail=20 --context=fed --cluster=cluster2

  # The last hour of one pod's log, wherever it runs
  kubefed logs web-7d9f8-abcde --since=1h --context=fed`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the pods (default: the context's namespace)")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector of the pods (e.g. app=web)")
	f.StringVarP(&o.container, "container", "c", "", "container to read (default: every container of each pod)")
	f.BoolVarP(&o.follow, "follow", "f", false, "follow the logs until interrupted")
	f.Int64Var(&o.tail, "tail", -1, "lines of each log to print from its end (default: all)")
	f.DurationVar(&o.since, "since", 0, "only lines newer than this (e.g. 10s, 5m, 1h)")
	f.BoolVar(&o.timestamps, "timestamps", false, "print each line's timestamp")
	f.BoolVarP(&o.previous, "previous", "p", false, "the previous instance of each container")
	f.IntVar(&o.maxLogRequests, "max-log-requests", defaultMaxLogRequests, "streams read at once")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long each member has to say which pods match")
	return cmd
}

func (o *logsOptions) complete(args []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	arg := ""
	if len(args) > 0 {
		arg = args[0]
	}
	var err error
	if o.target, err = parseLogTarget(arg, o.selector); err != nil {
		return err
	}
	switch {
	case o.maxLogRequests < 1:
		return errors.New("--max-log-requests must be at least 1")
	case o.since < 0:
		return errors.New("--since must not be negative")
	case o.timeout <= 0:
		return errors.New("--timeout must be positive")
	}
	return nil
}

// run finds the pods in every member at once, then reads their logs.
func (o *logsOptions) run(ctx context.Context, out, errOut io.Writer) error {
	fed, members, namespace, err := o.resolve(ctx, o.namespace)
	if err != nil {
		return err
	}
	type memberStreams struct {
		streams []logStream
		// skipped are pods without the container -c names.
		skipped []string
	}
	answers := fanOut(ctx, members, o.timeout, func(ctx context.Context, cluster string) (memberStreams, error) {
		// No client timeout: a followed log lasts as long as it is read.
		client, err := kubernetes.NewForConfig(fed.memberConfig(cluster))
		if err != nil {
			return memberStreams{}, err
		}
		pods, err := o.target.pods(ctx, client, namespace)
		if err != nil {
			return memberStreams{}, err
		}
		streams, skipped := planStreams(cluster, pods, o.container)
		for i := range streams {
			streams[i].client = client
		}
		return memberStreams{streams: streams, skipped: skipped}, nil
	})
	if ctx.Err() != nil {
		// Interrupted: the members' errors would only say so.
		return ctx.Err()
	}
	var streams []logStream
	failedMembers := 0
	for _, a := range answers {
		if a.err != nil {
			failedMembers++
			fmt.Fprintf(errOut, "cluster %s: %s\n", a.cluster, escapeControl(a.err.Error()))
			continue
		}
		for _, s := range a.value.skipped {
			fmt.Fprintf(errOut, "skipped %s\n", escapeControl(s))
		}
		streams = append(streams, a.value.streams...)
	}
	if len(streams) == 0 {
		if failedMembers == len(members) {
			return fmt.Errorf("no member cluster answered (%d asked)", len(members))
		}
		return fmt.Errorf("no %s in namespace %s of any of %d member clusters", o.target, namespace, len(members))
	}
	if o.follow && len(streams) > o.maxLogRequests {
		return fmt.Errorf("%d log streams match (%s), more than --max-log-requests=%d that can be followed at once: "+
			"narrow them with -l, -c or --cluster, or raise --max-log-requests", len(streams), o.target, o.maxLogRequests)
	}
	failed := streamLogs(ctx, streams, o.logOptions, o.maxLogRequests, out, errOut)
	if failed == len(streams) && ctx.Err() == nil {
		return fmt.Errorf("no log of the %d matching streams could be read", len(streams))
	}
	return nil
}
