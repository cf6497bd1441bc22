package server_test

import (
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/server"
)

// The servers' configuration, not the analyst's request, fixes a
// dataset's privacy contract: a release under another neighbouring
// relation, or with a mechanism the dataset does not allow, is refused
// before anything is charged.
func ExamplePolicy_Allow() {
	p := server.Policy{Relation: mechanism.ReplaceOne, Mechanisms: []string{"kary"}}
	for _, req := range []mechanism.Params{
		{Name: "kary", Bins: 64, Epsilon: 1, Relation: mechanism.ReplaceOne},
		{Name: "kary", Bins: 64, Epsilon: 1, Relation: mechanism.AddRemove},
		{Name: "cascade", Bins: 64, Epsilon: 1, Delta: 1e-6},
	} {
		err := p.Allow(req)
		fmt.Printf("%s under %s: refused %v\n", req.Name, req.Relation, errors.Is(err, server.ErrPolicy))
	}
	// Output:
	// kary under replace: refused false
	// kary under addremove: refused true
	// cascade under replace: refused true
}
