package report

import (
	"sort"

	"github.com/meterio/meter/schema"
)

// flameNode is one frame of a flame graph: the call path from a root down
// to Name. Own figures are those of the samples whose stack is exactly
// this path; Value sums the width's sample type over the whole subtree.
type flameNode struct {
	Name                                string
	OwnCount, OwnInclusive, OwnInherent int64
	Value                               int64
	Children                            []*flameNode

	index map[string]*flameNode // children by name, while building
}

// Flame builds the flame graph of the profile's call paths, under one
// root that stands for all of them. In the runtime's profile these are
// the samples labelled source=trace (the rest are model rows, not paths);
// a profile without source labels is drawn whole. Widths are inherent
// time where the profile has it (a frame's width is then its inclusive
// time: its own inherent time and that of everything metered beneath
// it), else the profile's default sample type. typ is the sample type
// used; a root with no children means there are no call paths.
func (p *Profile) flame() (root *flameNode, typ string) {
	wi := p.Index(schema.SampleInherent)
	if wi < 0 {
		wi = p.Index(p.DefaultSampleType)
	}
	if wi < 0 {
		wi = len(p.SampleTypes) - 1
	}
	root = &flameNode{Name: "all"}
	if wi < 0 {
		return root, ""
	}
	typ = p.SampleTypes[wi].Type
	labelled, traced := false, false
	for i := range p.Samples {
		if src, ok := p.Samples[i].Labels[schema.SourceLabel]; ok {
			labelled = true
			if len(src) > 0 && src[0] == schema.SourceTrace {
				traced = true
				break
			}
		}
	}
	if labelled && !traced {
		return root, typ
	}
	ci, ii, hi := p.Index(schema.SampleCount), p.Index(schema.SampleInclusive), p.Index(schema.SampleInherent)
	value := func(s *Sample, i int) int64 {
		if i < 0 {
			return 0
		}
		return s.Values[i]
	}
	for i := range p.Samples {
		s := &p.Samples[i]
		if labelled {
			if src := s.Labels[schema.SourceLabel]; len(src) == 0 || src[0] != schema.SourceTrace {
				continue
			}
		}
		v := value(s, wi)
		n := root
		n.Value += v
		for j := len(s.Stack) - 1; j >= 0; j-- { // the stack is leaf first
			n = n.child(s.Stack[j])
			n.Value += v
		}
		n.OwnCount += value(s, ci)
		n.OwnInclusive += value(s, ii)
		n.OwnInherent += value(s, hi)
	}
	root.sort()
	return root, typ
}

func (n *flameNode) child(name string) *flameNode {
	if c, ok := n.index[name]; ok {
		return c
	}
	if n.index == nil {
		n.index = map[string]*flameNode{}
	}
	c := &flameNode{Name: name}
	n.index[name] = c
	n.Children = append(n.Children, c)
	return c
}

// sort puts the widest frames first, so the eye finds them on the left.
func (n *flameNode) sort() {
	n.index = nil
	sort.Slice(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Value != b.Value {
			return a.Value > b.Value
		}
		return a.Name < b.Name
	})
	for _, c := range n.Children {
		c.sort()
	}
}
