package tracing

import (
	"sync"
	"sync/atomic"
)

// resourceInfo is what spans and metrics need to know of a resource locked
// in a kind of lock: the resource's class, and the series of the class and
// kind.
type resourceInfo struct {
	resource, class, kind string
	series                *series
}

type resourceKey struct{ resource, kind string }

// resourceCache keeps the resourceInfo of the resources locked lately, so
// that an acquire of a resource seen before neither computes its class
// again (DefaultResourceClass scans the name and builds a new string for
// "accounts/42") nor looks its series up. It is bounded: the entry that
// would make it hold more than maxCachedResources empties it first, and it
// fills again with the resources in use. An acquire of a resource not in
// it costs what it did without it, plus a store.
type resourceCache struct {
	m sync.Map // resourceKey → *resourceInfo
	n atomic.Int64
}

// maxCachedResources bounds a resourceCache.
const maxCachedResources = 4096

// resource returns the resourceInfo of resource locked in a lock of kind.
func (o *Observer) resource(resource, kind string) *resourceInfo {
	k := resourceKey{resource, kind}
	if v, ok := o.resources.m.Load(k); ok {
		return v.(*resourceInfo)
	}
	class := o.class(resource)
	ri := &resourceInfo{resource: resource, class: class, kind: kind, series: o.series.get(class, kind)}
	if o.resources.n.Add(1) > maxCachedResources {
		o.resources.m.Clear()
		o.resources.n.Store(1)
	}
	o.resources.m.Store(k, ri)
	return ri
}
