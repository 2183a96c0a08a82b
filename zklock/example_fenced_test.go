package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
)

// A leader publishes its plan in ZooKeeper with a write fenced by its
// lease: ZooKeeper commits it only while the lease's node exists, so a
// leader that lost its lease (paused past its session, or its node
// deleted) cannot overwrite its successor's plan.
func ExampleClient_Fenced() {
	ctx := context.Background()
	c, err := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/fenced"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	lease, err := c.Campaign(ctx, "scheduler", []byte("host-a"))
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.WithoutCancel(ctx))
	plan := "/example/fenced-plan"
	_, _ = c.Conn().Create(plan, nil, 0, zk.WorldACL(zk.PermAll))
	defer c.Conn().Delete(plan, -1)

	_, err = c.Fenced(ctx, lease, &zk.SetDataRequest{Path: plan, Data: []byte("shard 1 → host-a"), Version: -1})
	fmt.Println("published:", err == nil)

	// An operator deletes the leader's node: the next fenced write is
	// refused by ZooKeeper, and the plan stays as it was.
	_ = c.Conn().Delete(lease.Path(), -1)
	_, err = c.Fenced(ctx, lease, &zk.SetDataRequest{Path: plan, Data: []byte("stale"), Version: -1})
	fmt.Println("refused, lease lost:", errors.Is(err, zklock.ErrLeaseLost))
	data, _, _ := c.Conn().Get(plan)
	fmt.Println("plan:", string(data))
	// Output:
	// published: true
	// refused, lease lost: true
	// plan: shard 1 → host-a
}
