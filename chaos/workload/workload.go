package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"samsa/chaos/history"
)

// Env is what a workload runs against.
type Env struct {
	Bootstrap []string
	Topic     string
	History   *history.Writer
	Rate      int  // records per second per producer
	Unclean   bool // unclean.leader.election.enable of the topics a workload creates
}

// Workload is one client workload of a run.
type Workload interface {
	Name() string
	// Start launches the clients and returns; they run until Stop.
	Start(ctx context.Context, env Env) error
	// Stop ends the producers first, waits (bounded) for their in-flight
	// records to complete, then stops the consumers.
	Stop(ctx context.Context) error
	// FinalRead records the ground truth of the workload's topics, once
	// the cluster is whole again after Stop.
	FinalRead(ctx context.Context) error
}

// ByName returns the workload called name: "queue", "txn", or several
// joined by commas ("queue,txn"), run side by side.
func ByName(name string) (Workload, error) {
	var ws multi
	for _, n := range strings.Split(name, ",") {
		switch n {
		case "queue":
			ws = append(ws, &Queue{})
		case "txn":
			ws = append(ws, &Txn{})
		default:
			return nil, fmt.Errorf("workload: unknown workload %q (queue, txn)", n)
		}
	}
	if len(ws) == 1 {
		return ws[0], nil
	}
	return ws, nil
}

// multi runs several workloads side by side: started in order, stopped and
// read in order.
type multi []Workload

func (m multi) Name() string {
	names := make([]string, len(m))
	for i, w := range m {
		names[i] = w.Name()
	}
	return strings.Join(names, ",")
}

func (m multi) Start(ctx context.Context, env Env) error {
	for _, w := range m {
		if err := w.Start(ctx, env); err != nil {
			return err
		}
	}
	return nil
}

func (m multi) Stop(ctx context.Context) error {
	var errs []error
	for _, w := range m {
		errs = append(errs, w.Stop(ctx))
	}
	return errors.Join(errs...)
}

func (m multi) FinalRead(ctx context.Context) error {
	var errs []error
	for _, w := range m {
		errs = append(errs, w.FinalRead(ctx))
	}
	return errors.Join(errs...)
}
