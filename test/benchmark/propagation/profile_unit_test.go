package propagation

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSaveGetSavesAnOKAnswerAndRefusesAnyOther(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte("profile"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.pprof")
	require.NoError(t, saveGet(srv.Client(), srv.URL+"/ok", ok))
	b, err := os.ReadFile(ok)
	require.NoError(t, err)
	assert.Equal(t, "profile", string(b))

	refused := filepath.Join(dir, "refused.pprof")
	assert.ErrorContains(t, saveGet(srv.Client(), srv.URL+"/denied", refused), "403")
	assert.NoFileExists(t, refused, "an error page is not saved as a profile")
}
