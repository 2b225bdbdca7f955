package memberenv

import (
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Clients makes the admin clients of the members once each, with the
// settings a test chose, and hands out the same client afterwards.
type Clients struct {
	env  *Environment
	tune func(*rest.Config)

	mu       sync.Mutex
	dynamic  map[string]dynamic.Interface
	metadata map[string]metadata.Interface
}

// Clients returns a maker of member clients; tune (may be nil) adjusts each
// configuration (rate limits, timeout) before a client is made of it.
func (e *Environment) Clients(tune func(*rest.Config)) *Clients {
	return &Clients{env: e, tune: tune, dynamic: map[string]dynamic.Interface{}, metadata: map[string]metadata.Interface{}}
}

// Dynamic returns the dynamic client of the named member.
func (c *Clients) Dynamic(name string) (dynamic.Interface, error) {
	return cached(c, c.dynamic, name, func(cfg *rest.Config) (dynamic.Interface, error) { return dynamic.NewForConfig(cfg) })
}

// Metadata returns the metadata-only client of the named member.
func (c *Clients) Metadata(name string) (metadata.Interface, error) {
	return cached(c, c.metadata, name, func(cfg *rest.Config) (metadata.Interface, error) { return metadata.NewForConfig(cfg) })
}

func cached[T any](c *Clients, made map[string]T, name string, newClient func(*rest.Config) (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := made[name]; ok {
		return client, nil
	}
	var zero T
	cfg, err := c.env.RESTConfig(name)
	if err != nil {
		return zero, err
	}
	if c.tune != nil {
		c.tune(cfg)
	}
	client, err := newClient(cfg)
	if err != nil {
		return zero, err
	}
	made[name] = client
	return client, nil
}
