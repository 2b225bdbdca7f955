package memberenv

import "github.com/federation-v1/federation/pkg/localprocess"

// programs are the binaries an environment runs, by base name.
var programs = map[string]bool{
	"etcd": true, "kube-apiserver": true, "kube-controller-manager": true,
	"kube-scheduler": true, "kwok": true, "memberenv": true,
}

// Leftovers finds the live environment programs whose command line
// mentions dir, even when the state file is lost.
func Leftovers(dir string) []*localprocess.Process {
	return localprocess.FindMentioning(dir, programs)
}
