package plan

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// travellingLastApplied is kubectl apply's record of the federated object
// (the last-applied-configuration annotation) as it travels: without the
// annotations that do not travel. It holds the whole object, so without
// this a change of one cluster's override rules, say, would change every
// copy. A record that is not a JSON object travels as it is.
func travellingLastApplied(annotations map[string]string) {
	record, ok := annotations[corev1.LastAppliedConfigAnnotation]
	if !ok {
		return
	}
	var obj map[string]any
	if json.Unmarshal([]byte(record), &obj) != nil {
		return
	}
	meta, _ := obj["metadata"].(map[string]any)
	recorded, _ := meta["annotations"].(map[string]any)
	dropped := false
	for k := range recorded {
		if notTravelling[k] {
			delete(recorded, k)
			dropped = true
		}
	}
	if !dropped {
		return
	}
	if len(recorded) == 0 {
		delete(meta, "annotations")
	}
	if b, err := json.Marshal(obj); err == nil {
		// kubectl ends its record with a newline.
		annotations[corev1.LastAppliedConfigAnnotation] = string(b) + "\n"
	}
}
