package propagation

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

// scenarioBurstLimit names the rows of the burst's limit phase.
const scenarioBurstLimit = "burst limit"

// limitPrefix and limitNames name the ConfigMaps of the limit phase.
const limitPrefix = "limit-"

var limitNames = objectNames(limitPrefix, burstObjects)

// burstLimit measures the most any federation could reach in this round
// and returns how long it took. It makes the reference's member writes
// and, at the same time, the burst's creates at the federation apiserver,
// with the controller manager stopped (SIGSTOP) so that it costs nothing:
// a federation has to store the objects, and its controller has to make
// the same member writes as the reference. Everything else the federation
// does (the controller manager's own work, its watches of the members,
// finalizers, events) comes on top, so no federation on this machine can
// beat this figure.
func (bn *bench) burstLimit(ctx context.Context) time.Duration {
	cm, api := bn.planePIDs()
	o := bn.observe(refNamespace, refSelector)
	defer o.stop()
	bn.quiet("the burst limit")
	bn.check(syscall.Kill(cm, syscall.SIGSTOP))
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			bn.check(syscall.Kill(cm, syscall.SIGCONT))
		}
	}
	defer resume()

	m := startMeter(map[string]int{"benchmark": os.Getpid(), processplane.APIServer: api})
	machine, members := startMachineMeter(), startGroupMeter(bn.memberPrograms)
	start := time.Now()
	fedCreated := make(chan error, 1)
	go func() { fedCreated <- bn.createAtFederation(ctx, limitNames, "1") }()
	err := bn.refEverywhere(len(limitNames), func(c string, i int) error {
		return bn.refApply(ctx, c, configMapsResource, refConfigMap(limitNames[i], "1"))
	})
	bn.check(err)
	bn.check(<-fedCreated)
	_, last, err := o.wait(limitNames, start, present("1"), bn.convergeTimeout(len(limitNames)), "burst limit")
	bn.check(err)
	used, err := m.stop()
	bn.check(err)
	bn.note(fmt.Sprintf("burst N=%d, limit (the reference's writes and the creates at the federation, controller manager stopped): %s; "+
		"the benchmark process used %.1f CPU s, the federation apiserver %.1f; members: %s; %s",
		len(bn.clusters), o.spread(limitNames, start, present("1")), used["benchmark"].CPUSeconds,
		used[processplane.APIServer].CPUSeconds, members, machine))

	// Clear the way, untimed. The objects at the federation go at once;
	// the controller manager, resumed, deletes their copies from their
	// tombstones.
	bn.check(bn.deleteAtFederation(ctx, limitNames))
	resume()
	bn.check(bn.refEverywhere(len(limitNames), func(c string, i int) error {
		return bn.refDelete(ctx, c, configMapsResource, limitNames[i])
	}))
	_, _, err = o.wait(limitNames, start, gone, bn.convergeTimeout(len(limitNames)), "clearing the burst limit's copies")
	bn.check(err)
	bn.check(poll.UntilEvery(ctx, bn.convergeTimeout(len(limitNames)), time.Second, "the burst limit's objects gone from the federation", func(ctx context.Context) error {
		left, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, cm := range left.Items {
			if strings.HasPrefix(cm.Name, limitPrefix) {
				return fmt.Errorf("%s and maybe others still there", cm.Name)
			}
		}
		return nil
	}))
	return last.Sub(start)
}
