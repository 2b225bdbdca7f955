package memberview

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// tableAccept asks for the server-side Table of a list, as kubectl get
// does, and takes a plain list from a server that has none.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// pageSize is the number of rows asked per request.
const pageSize = 500

// listRequest is what kubefed get lists in each member.
type listRequest struct {
	resource resource
	// namespace is empty for all namespaces or a cluster-scoped resource.
	namespace     string
	labelSelector string
	fieldSelector string
}

// listTable lists the request's objects in the member cfg reaches as the
// member's server-side Table, every page of it.
func listTable(ctx context.Context, cfg *rest.Config, req listRequest) (*metav1.Table, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	gvr := req.resource.gvr
	prefix := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		prefix = []string{"/api", gvr.Version}
	}
	var table *metav1.Table
	next := ""
	for {
		r := client.Get().AbsPath(prefix...)
		if req.resource.namespaced && req.namespace != "" {
			r = r.Namespace(req.namespace)
		}
		r = r.Resource(gvr.Resource).
			SetHeader("Accept", tableAccept).
			Param("includeObject", string(metav1.IncludeMetadata)).
			Param("limit", strconv.Itoa(pageSize))
		if req.labelSelector != "" {
			r = r.Param("labelSelector", req.labelSelector)
		}
		if req.fieldSelector != "" {
			r = r.Param("fieldSelector", req.fieldSelector)
		}
		if next != "" {
			r = r.Param("continue", next)
		}
		result := r.Do(ctx)
		// Error, not Raw's error, reads the Status a refusal carries.
		if err := result.Error(); err != nil {
			return nil, err
		}
		body, err := result.Raw()
		if err != nil {
			return nil, err
		}
		page, err := decodeTable(body)
		if err != nil {
			return nil, fmt.Errorf("reading the list of %s: %w", gvr.GroupResource(), err)
		}
		if table == nil {
			table = page
		} else {
			table.Rows = append(table.Rows, page.Rows...)
		}
		if next = page.Continue; next == "" {
			return table, nil
		}
	}
}

// decodeTable reads a Table, or makes one (NAME, AGE) of a plain list from
// a server that serves no Table for the resource.
func decodeTable(body []byte) (*metav1.Table, error) {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(body, &kind); err != nil {
		return nil, err
	}
	if kind.Kind == "Table" {
		table := &metav1.Table{}
		d := json.NewDecoder(bytes.NewReader(body))
		// Integer cells print as integers, not 1.5e+06.
		d.UseNumber()
		return table, d.Decode(table)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(body); err != nil {
		return nil, err
	}
	table := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Age", Type: "string"}},
	}
	table.Continue = list.GetContinue()
	for i := range list.Items {
		item := &list.Items[i]
		meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: item.GetName(), Namespace: item.GetNamespace()}}
		raw, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		age := duration.HumanDuration(time.Since(item.GetCreationTimestamp().Time))
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{item.GetName(), age}, Object: runtime.RawExtension{Raw: raw}})
	}
	return table, nil
}
