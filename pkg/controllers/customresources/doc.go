// Package customresources propagates CustomResourceDefinitions and their
// custom resources. CRDs are one more federated type, copied whole to the
// members. Their custom resources are propagated by the generic propagation
// controller with a federatedtypes.Type built at run time from each CRD
// (Type): one controller per CRD once it is Established at the federation,
// stopped when the CRD goes (Controller). Their status comes back per
// cluster in an annotation, with an aggregated Ready condition and opt-in
// sums of replica-like fields (status.go).
package customresources
