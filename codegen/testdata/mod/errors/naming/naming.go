// Package naming declares the names zklockgen would generate.
package naming

import "context"

// Accounts has a marked method.
type Accounts struct{}

//zklock:resource=a
func (a *Accounts) Withdraw(ctx context.Context) error { return nil }

// LockedAccounts is already declared.
type LockedAccounts struct{}

// NewLockedAccounts is already declared.
func NewLockedAccounts() {}

//zklock:resource=b
func Run(ctx context.Context) error { return nil }

// LockedRun is already declared.
var LockedRun = 1

// Node has a method named Node, which the wrapper's embedded *Node field
// would hide.
type Node struct{}

// Node is a method.
func (n *Node) Node() string { return "" }

//zklock:resource=n
func (n *Node) Visit(ctx context.Context) error { return nil }
