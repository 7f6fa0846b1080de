package translate

import "maps"

// Pair is one map (labels or annotations) as seen on each side, both in the
// virtual key space: host-only bookkeeping keys are removed and reserved
// label keys translated back before a Pair is built.
type Pair struct {
	Virtual map[string]string
	Host    map[string]string
}

// Merge3 merges the labels or annotations of a synced object pair key by key
// against base, the pair as it was after the last sync (nil when unknown, e.g.
// right after the syncer starts). For each key:
//   - changed on the virtual side since base: the virtual value (or its
//     absence) is written to both sides; the virtual side wins a conflict;
//   - else changed on the host side since base: the host value (or its
//     absence) is written to both sides;
//   - else (unchanged, or no base): a key the virtual object has is written to
//     the host; a key that managed reports as once copied from the virtual
//     object, but which the virtual object no longer has, is removed from the
//     host; any other host key belongs to the host (added by a host
//     controller) and is kept there and not copied back.
//
// The inputs are not modified. This is vCluster's bidirectional key-diff
// update (https://github.com/loft-sh/vcluster/blob/main/pkg/util/translate/translate.go,
// applyMaps) with the managed-annotations
// bookkeeping used also for the case without a base.
func Merge3(base *Pair, cur Pair, managed map[string]bool) Pair {
	out := Pair{Virtual: maps.Clone(cur.Virtual), Host: maps.Clone(cur.Host)}
	if out.Virtual == nil {
		out.Virtual = map[string]string{}
	}
	if out.Host == nil {
		out.Host = map[string]string{}
	}
	keys := map[string]struct{}{}
	for k := range cur.Virtual {
		keys[k] = struct{}{}
	}
	for k := range cur.Host {
		keys[k] = struct{}{}
	}
	if base != nil {
		for k := range base.Virtual {
			keys[k] = struct{}{}
		}
		for k := range base.Host {
			keys[k] = struct{}{}
		}
	}
	for k := range keys {
		v, vok := cur.Virtual[k]
		h, hok := cur.Host[k]
		if base != nil {
			bv, bvok := base.Virtual[k]
			bh, bhok := base.Host[k]
			if vok != bvok || v != bv {
				setOrDelete(out.Host, k, v, vok)
				continue
			}
			if hok != bhok || h != bh {
				setOrDelete(out.Virtual, k, h, hok)
				continue
			}
		}
		switch {
		case vok:
			out.Host[k] = v
		case hok && managed[k]:
			delete(out.Host, k)
		}
	}
	return out
}

func setOrDelete(m map[string]string, k, v string, ok bool) {
	if ok {
		m[k] = v
	} else {
		delete(m, k)
	}
}
