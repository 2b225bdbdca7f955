// Package memberevents brings the member clusters' events about a
// federated object's copies, and about what those copies own (a
// Deployment's ReplicaSets and Pods, a Job's Pods), to the federated
// object at the federation, so that `kubectl describe` there tells why:
//
//	Warning  FailedScheduling  federation-controller-manager, cluster2  cluster2: 0/2 nodes are available: ...
//
// It is a pipeline of four small stages:
//
//   - stream (membercluster.Stream): one watch of events per member,
//     type=Warning unless --member-events=All, that caches nothing; each
//     event is cut down to what is kept of it (event.go) and left at once
//     when its namespace holds no copy.
//   - resolve (owners.go): the involved object, then its controller
//     references, are looked up by UID in the member caches (copies, and
//     the labelled Pods and ReplicaSets copies make), else read from the
//     member (Pods, ReplicaSets, Jobs: a budget of GETs per member, the
//     answers remembered by UID), up to a copy of this federation; the
//     federated object of that copy must exist at the federation under
//     the UID the copy records (fedobjects.go).
//   - mirror (mirror.go): identical events (same object, cluster, type,
//     reason and message) become one federation event whose count is the
//     sum of the members' counts; more than 10 messages of one reason are
//     combined (client-go's EventAggregator). Writes of one event are at
//     least 10 s apart, writes about one object from one cluster have a
//     budget (10, then one per 30 s), and all of them together (20 a
//     second). Every cache is an LRU of fixed size.
//   - write (write.go): create, then merge patches of count, message and
//     times; the event's name is derived from what makes it one, so that
//     a controller manager that restarts goes on with the events it wrote.
//
// Only the event's reason and message travel, prefixed with the cluster,
// into the federated object's namespace.
package memberevents
