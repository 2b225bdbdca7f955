package propagation

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

var profileDir = flag.String("profile-dir", "", "if set, save here the CPU profiles of the controller manager and of the federation apiserver over the first seconds of the federated burst (of the scale scenario: at rest, and across the restart), the controller manager's goroutines 5s in, and its /metrics after")

// profileSeconds is how long the burst's profile runs.
const profileSeconds = 15

// profile starts a CPU profile of the controller manager when -profile-dir
// is set and returns a function that waits for it and saves it.
func (bn *bench) profile(scenario string) func() {
	if *profileDir == "" {
		return func() {}
	}
	// The controller manager serves its profiles over HTTPS to callers the
	// federation authorizes: the plane's admin.
	client, base, err := bn.u.Plane(federation).ControllerManagerClient()
	bn.check(err)
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, profileSeconds)
	path := filepath.Join(*profileDir, fmt.Sprintf("controller-manager-%s-%d.pprof", scenario, len(bn.clusters)))
	if err := os.MkdirAll(*profileDir, 0o755); err != nil {
		bn.check(err)
	}
	done := make(chan error, 1)
	dump := func(url, name string) error {
		return saveGet(client, url, filepath.Join(*profileDir, fmt.Sprintf("controller-manager-%s-%d.%s", scenario, len(bn.clusters), name)))
	}
	go func() {
		time.Sleep(5 * time.Second) // into the burst: where the workers wait
		if err := dump(base+"/debug/pprof/goroutine?debug=1", "goroutines.txt"); err != nil {
			bn.note(fmt.Sprintf("%s: goroutine dump: %v", scenario, err))
		}
	}()
	go func() { done <- saveGet(client, url, path) }()
	// The federation apiserver serves /debug/pprof/ to its admin.
	apiserverDone := profileAPIServer(bn.fed.CoreV1().RESTClient(),
		filepath.Join(*profileDir, fmt.Sprintf("federation-apiserver-%s-%d.pprof", scenario, len(bn.clusters))))
	return func() {
		if err := <-apiserverDone; err != nil {
			bn.note(fmt.Sprintf("%s, %d clusters: profiling the federation apiserver: %v", scenario, len(bn.clusters), err))
		}
		if err := dump(base+"/metrics", "metrics.txt"); err != nil {
			bn.note(fmt.Sprintf("%s: metrics: %v", scenario, err))
		}
		if err := <-done; err != nil {
			bn.note(fmt.Sprintf("%s, %d clusters: profiling the controller manager: %v", scenario, len(bn.clusters), err))
			return
		}
		fmt.Printf("clusters=%d: controller manager CPU profile of %s in %s\n", len(bn.clusters), scenario, path)
	}
}

// saveGet saves to path what client answers to a GET of url, which must
// be 200 OK.
func saveGet(client *http.Client, url, path string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// profileAPIServer saves a CPU profile of profileSeconds of the apiserver
// client reaches (a kube-apiserver or the federation's) to path, and tells
// when it is done.
func profileAPIServer(client rest.Interface, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		raw, err := client.Get().AbsPath("/debug/pprof/profile").
			Param("seconds", fmt.Sprint(profileSeconds)).Timeout((profileSeconds + 30) * time.Second).DoRaw(context.Background())
		if err == nil {
			err = os.WriteFile(path, raw, 0o644)
		}
		done <- err
	}()
	return done
}

// profileMember profiles the first member's kube-apiserver, when
// -profile-dir is set, so that the reference's and the federation's bursts
// can be compared where most of the machine's time goes; the function
// returned waits for the profile.
func (bn *bench) profileMember(phase string) func() {
	if *profileDir == "" {
		return func() {}
	}
	if err := os.MkdirAll(*profileDir, 0o755); err != nil {
		bn.check(err)
	}
	cluster := bn.clusters[0]
	path := filepath.Join(*profileDir, fmt.Sprintf("member-kube-apiserver-%s-%d.pprof", phase, len(bn.clusters)))
	done := profileAPIServer(bn.watchers[cluster].CoreV1().RESTClient(), path)
	return func() {
		if err := <-done; err != nil {
			bn.note(fmt.Sprintf("%s, %d clusters: profiling %s's kube-apiserver: %v", phase, len(bn.clusters), cluster, err))
		}
	}
}
