package propagation

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

var profileDir = flag.String("profile-dir", "", "if set, save a CPU profile of the controller manager over the first seconds of each federated burst here")

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
	done := make(chan error, 1)
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
		if err := os.MkdirAll(*profileDir, 0o755); err != nil {
			done <- err
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
	return func() {
		if err := <-done; err != nil {
			bn.note(fmt.Sprintf("%s, %d clusters: profiling the controller manager: %v", scenario, len(bn.clusters), err))
			return
		}
		fmt.Printf("clusters=%d: controller manager CPU profile of %s in %s\n", len(bn.clusters), scenario, path)
	}
}
