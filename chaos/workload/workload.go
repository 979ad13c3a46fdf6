package workload

import (
	"context"
	"fmt"

	"samsa/chaos/history"
)

// Env is what a workload runs against.
type Env struct {
	Bootstrap []string
	Topic     string
	History   *history.Writer
	Rate      int // records per second per producer
}

// Workload is one client workload of a run.
type Workload interface {
	Name() string
	// Start launches the clients and returns; they run until Stop.
	Start(ctx context.Context, env Env) error
	// Stop ends the producers first, waits (bounded) for their in-flight
	// records to complete, then stops the consumers.
	Stop(ctx context.Context) error
}

// ByName returns the workload called name.
func ByName(name string) (Workload, error) {
	switch name {
	case "queue":
		return &Queue{}, nil
	case "txn":
		return nil, fmt.Errorf("workload: txn waits for the transactions issue (checker.CheckTxn is ready for its history)")
	}
	return nil, fmt.Errorf("workload: unknown workload %q (queue, txn)", name)
}
