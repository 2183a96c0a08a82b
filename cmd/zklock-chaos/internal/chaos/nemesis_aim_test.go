package chaos

import (
	"math/rand/v2"
	"testing"
)

// The first pause goes to an exclusive lock's holder, whatever the
// shuffle, so that every campaign has a paused holder whose late write the
// fence must refuse; the later pauses go round the recipes as every other
// fault does.
func TestFirstPauseAimsAtAnExclusiveHolder(t *testing.T) {
	for seed := range uint64(50) {
		n := &nemesis{hub: &hub{}, counts: map[FaultKind]int{}, aimed: map[FaultKind]map[string]int{}}
		rng := rand.New(rand.NewPCG(seed, 1))
		if r := n.recipeFor(FaultPause, rng); r != RecipeExclusive {
			t.Fatalf("seed %d: the first pause aims at %s", seed, r)
		}
		n.aimed[FaultPause] = map[string]int{RecipeExclusive: 1}
		if r := n.recipeFor(FaultPause, rng); r == RecipeExclusive {
			t.Fatalf("seed %d: the second pause aims at %s again, before every other recipe", seed, r)
		}
	}
}
