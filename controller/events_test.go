package controller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestControllerEventsOneFileExhaustive: every event type of the package is declared in
// events.go and named by a case of process (the switch the event goroutine runs), so an
// event cannot be added without its dispatch, nor hide in an on_*.go file.
func TestControllerEventsOneFileExhaustive(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // event type -> file
	var cases []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				// Events are the types with an activeOnly method; queuedEvent is the
				// queue's wrapper, not an event.
				if strings.HasSuffix(n.Name.Name, "Event") && n.Name.Name != "queuedEvent" {
					declared[n.Name.Name] = name
				}
			case *ast.FuncDecl:
				if n.Name.Name != "process" || n.Recv == nil {
					return true
				}
				ast.Inspect(n.Body, func(m ast.Node) bool {
					if cc, ok := m.(*ast.CaseClause); ok {
						for _, x := range cc.List {
							if id, ok := x.(*ast.Ident); ok {
								cases = append(cases, id.Name)
							}
						}
					}
					return true
				})
			}
			return true
		})
	}
	if len(declared) < 20 {
		t.Fatalf("found only %d event types: %v", len(declared), declared)
	}
	for typ, file := range declared {
		if file != "events.go" {
			t.Errorf("event type %s is declared in %s, not events.go", typ, file)
		}
		if !slices.Contains(cases, typ) {
			t.Errorf("event type %s has no case in process", typ)
		}
	}
	for _, c := range cases {
		if _, ok := declared[c]; !ok {
			t.Errorf("process has a case for %s, which is not a declared event type", c)
		}
	}
}

// strayEvent is an event type process does not know.
type strayEvent struct{ duty bool }

func (strayEvent) name() string       { return "Stray" }
func (e strayEvent) activeOnly() bool { return e.duty }

// TestControllerUnknownEventPanicsInTests: process's default refuses an unknown event
// (a panic under go test); a controller-duty event on an inactive controller is dropped
// before the switch, as every duty event is.
func TestControllerUnknownEventPanicsInTests(t *testing.T) {
	c := &Controller{}
	c.process(strayEvent{duty: true}) // inactive: dropped, no panic
	defer func() {
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, "strayEvent") || !strings.Contains(msg, "Stray") {
			t.Fatalf("recovered %v, want the unknown-event panic naming strayEvent", r)
		}
	}()
	c.process(strayEvent{})
	t.Fatal("process returned for an unknown event")
}
