package proxy

// heldViews are the views every held document keeps, by key (tests).
func (d *documents) heldViews() map[viewKey]view {
	out := map[viewKey]view{}
	for _, h := range d.held.Values() {
		if h.doc == nil {
			continue
		}
		h.doc.mu.Lock()
		for k, v := range h.doc.byKey {
			out[k] = v
		}
		h.doc.mu.Unlock()
	}
	return out
}

// forgetViews drops every view and visibility of every held document, so
// the next request builds its view again (benchmarks of a cold view).
func (d *documents) forgetViews() {
	for _, h := range d.held.Values() {
		if h.doc != nil {
			d.dropViews(h.doc)
		}
	}
}
