package fence

import (
	"fmt"

	"github.com/zklockkit/zklockkit/zklock"
)

// DefaultTable is the fence table's name unless WithTable says otherwise.
const DefaultTable = "zklock_fence"

// Option configures New and Install.
type Option func(*config)

type config struct {
	table   string
	dialect Dialect
	err     error
}

// WithTable names the fence table (default DefaultTable): a lower-case
// SQL identifier of at most 63 bytes, optionally schema-qualified
// ("locks.fence"). Anything else is refused with an error matching
// zklock.ErrInvalidOption. One table serves any number of resources, one
// row each; give separate services separate tables only if they lock
// through different ZooKeeper ensembles (see the package doc).
func WithTable(name string) Option {
	return func(c *config) {
		if !validTable(name) {
			c.setErr(fmt.Errorf("fence: %w: table name %q (want a lower-case identifier, optionally schema.table)", zklock.ErrInvalidOption, name))
			return
		}
		c.table = name
	}
}

// WithDialect says which SQL dialect the database speaks. New needs it;
// Install asks the database when it is not given.
func WithDialect(d Dialect) Option {
	return func(c *config) {
		if _, err := d.statements(DefaultTable); err != nil {
			c.setErr(fmt.Errorf("fence: %w: %w", zklock.ErrInvalidOption, err))
			return
		}
		c.dialect = d
	}
}

func (c *config) setErr(err error) {
	if c.err == nil {
		c.err = err
	}
}

func newConfig(opts []Option) config {
	c := config{table: DefaultTable}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}
