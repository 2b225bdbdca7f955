package propagation

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/federation-v1/federation/test/karmadaenv"
)

// profileSide profiles s's programs over the first profileSeconds of a
// scenario when -profile-dir is set: the federation's controller manager
// and apiserver (profile), or Karmada's controller manager, scheduler and
// karmada-apiserver. The function returned waits for the profiles.
func (kb *karmadaBench) profileSide(s *side, scenario string) func() {
	if *profileDir == "" {
		return func() {}
	}
	if s == kb.fedSys {
		return kb.profile("karmada-comparison-" + scenario)
	}
	kb.check(os.MkdirAll(*profileDir, 0o755))
	path := func(program, ext string) string {
		return filepath.Join(*profileDir, fmt.Sprintf("karmada-%s-%s-%d.%s", program, scenario, len(kb.clusters), ext))
	}
	// Karmada's programs serve pprof on loopback without authentication.
	client := &http.Client{Timeout: (profileSeconds + 30) * time.Second}
	var waits []<-chan error
	for _, program := range []string{karmadaenv.ControllerManager, karmadaenv.Scheduler} {
		done := make(chan error, 1)
		waits = append(waits, done)
		go func() {
			done <- saveGet(client, kb.plane.ProfileURL(program)+fmt.Sprintf("profile?seconds=%d", profileSeconds), path(program, "pprof"))
		}()
	}
	go func() {
		time.Sleep(5 * time.Second) // into the scenario: where the workers wait
		if err := saveGet(client, kb.plane.ProfileURL(karmadaenv.ControllerManager)+"goroutine?debug=1", path("controller-manager", "goroutines.txt")); err != nil {
			kb.note(fmt.Sprintf("%s: Karmada's goroutine dump: %v", scenario, err))
		}
	}()
	waits = append(waits, profileAPIServer(s.client.CoreV1().RESTClient(), path("apiserver", "pprof")))
	return func() {
		for _, w := range waits {
			if err := <-w; err != nil {
				kb.note(fmt.Sprintf("%s: profiling Karmada: %v", scenario, err))
			}
		}
		fmt.Printf("karmada comparison: Karmada's CPU profiles of %s in %s\n", scenario, *profileDir)
	}
}
