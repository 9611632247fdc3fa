package compiled

import "sync/atomic"

// Take adds to out, by NormalLine, what each line was counted since the
// last Take. One caller at a time (package grantusage holds its lock);
// decisions go on counting meanwhile.
func (u *Uses) Take(out map[string]uint64) {
	st := u.pol
	if u.keys == nil {
		u.keys = make([]string, len(u.rules.n))
		for i, r := range st.Rules {
			u.keys[i] = NormalLine(r)
		}
	}
	viaPairs := map[int32]uint64{} // rule -> uses through closure pairs
	if x, _ := st.d.(*index); x != nil {
		u.takePairs(st, x, viaPairs)
	}
	for i := range u.rules.n {
		if n := uint64(u.rules.take(i)) + viaPairs[int32(i)]; n > 0 && i < len(u.keys) && u.keys[i] != "" && st.Rules[i].Line > 0 {
			out[u.keys[i]] += n
		}
	}
}

// takePairs adds to via, per g line, how many decisions went through
// each closure pair since the last take: the pair's growth credited to
// every line of its path, found once per pair and loaded policy.
func (u *Uses) takePairs(st *Policy, x *index, via map[int32]uint64) {
	if u.pairSent == nil {
		u.pairSent = make([]uint32, x.pairs)
	}
	for _, rc := range x.closures {
		for name, c := range rc.cl {
			for j := range c.reach {
				p := c.base + int32(j)
				cur := atomic.LoadUint32(&c.reach[j].uses)
				n := cur - u.pairSent[p]
				if n == 0 {
					continue
				}
				u.pairSent[p] = cur
				path, ok := u.chains[p]
				if !ok {
					path = u.chain(st.Rules, rc.role, name, c.reach[j].name, Subject{})
					u.chains[p] = path
				}
				for _, r := range path {
					via[r] += uint64(n)
				}
			}
		}
	}
}

// numberPairs gives each closure of cl its pair numbers, from next on,
// and returns the next free number.
func numberPairs(cl map[string]closure, next int32) int32 {
	for name, c := range cl {
		c.base = next
		next += int32(len(c.reach))
		cl[name] = c
	}
	return next
}
