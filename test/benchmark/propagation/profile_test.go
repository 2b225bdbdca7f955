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
)

var profileDir = flag.String("profile-dir", "", "if set, save here the CPU profiles of the controller manager and of the federation apiserver over the first seconds of the federated burst, the controller manager's goroutines 5s in, and its /metrics after")

// profileSeconds is how long the burst's profile runs.
const profileSeconds = 15

// profile starts a CPU profile of the controller manager when -profile-dir
// is set and returns a function that waits for it and saves it.
func (bn *bench) profile(scenario string) func() {
	if *profileDir == "" {
		return func() {}
	}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", bn.u.Plane(federation).ControllerManagerAddress, profileSeconds)
	path := filepath.Join(*profileDir, fmt.Sprintf("controller-manager-%s-%d.pprof", scenario, len(bn.clusters)))
	if err := os.MkdirAll(*profileDir, 0o755); err != nil {
		bn.check(err)
	}
	done := make(chan error, 1)
	dump := func(url, name string) error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(*profileDir, fmt.Sprintf("controller-manager-%s-%d.%s", scenario, len(bn.clusters), name)))
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(f, resp.Body)
		return err
	}
	base := "http://" + bn.u.Plane(federation).ControllerManagerAddress
	go func() {
		time.Sleep(5 * time.Second) // into the burst: where the workers wait
		if err := dump(base+"/debug/pprof/goroutine?debug=1", "goroutines.txt"); err != nil {
			bn.note(fmt.Sprintf("%s: goroutine dump: %v", scenario, err))
		}
	}()
	go func() {
		client := &http.Client{Timeout: (profileSeconds + 30) * time.Second}
		resp, err := client.Get(url)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("%s: %s", url, resp.Status)
			return
		}
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(f, resp.Body)
		done <- err
	}()
	apiserverDone := make(chan error, 1)
	go func() {
		// The federation apiserver serves /debug/pprof/ to its admin.
		raw, err := bn.fed.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", fmt.Sprint(profileSeconds)).Timeout((profileSeconds + 30) * time.Second).DoRaw(context.Background())
		if err == nil {
			err = os.WriteFile(filepath.Join(*profileDir, fmt.Sprintf("federation-apiserver-%s-%d.pprof", scenario, len(bn.clusters))), raw, 0o644)
		}
		apiserverDone <- err
	}()
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
