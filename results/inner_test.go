package results

import (
	"slices"
	"testing"

	"github.com/trmaml/trmaml/configs"
)

// TestInnerLoopNamed: where groups differ by inner loop, legends and
// table rows name each group's loop, MAML's plain steps too; where they
// do not, a plain-steps group is named as before.
func TestInnerLoopNamed(t *testing.T) {
	t.Parallel()
	c := configs.Defaults()
	plain := KeyOf(&Run{Config: c})
	c.Inner.Kind, c.Algorithm = "metasgd", "trmaml"
	meta := KeyOf(&Run{Config: c})
	groups := []*Group{{Key: plain}, {Key: meta}}
	if got, want := Labels(groups), []string{"MAML, inner sgd", "TR-MAML, inner metasgd"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	if got := shownKey(groups[0], groups).Method(); got != "MAML, inner sgd" {
		t.Errorf("table row %q, want MAML, inner sgd", got)
	}
	if got := Labels(groups[:1]); !slices.Equal(got, []string{"MAML"}) {
		t.Errorf("labels of plain steps alone %q, want [MAML]", got)
	}
}
