package lint

import (
	"go/ast"
	"strconv"
	"testing"
)

// embedderExempt lists the structs that embed kafka.TopicPartition without
// a String of their own on purpose: file and type.
var embedderExempt = map[[2]string]bool{
	{"kafka/topic_partition_test.go", "offsetNoString"}: true, // shows what the rule prevents
}

// TestLintTopicPartitionEmbedders: a struct that embeds kafka.TopicPartition
// gets its String method, so fmt prints the struct as "t-0" alone and a
// failure message or log loses every other field. Every such struct must
// declare String() returning kafka.FieldsString of itself.
func TestLintTopicPartitionEmbedders(t *testing.T) {
	type key struct{ pkg, typ string }
	embedders := map[key]string{} // → file declaring the struct
	hasString := map[key]bool{}
	for _, f := range parseRepo(t) {
		pkg := f.pkgDir + "/" + f.ast.Name.Name
		kafkaName := kafkaImportName(f)
		for _, decl := range f.ast.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok && embedsTopicPartition(st, kafkaName, f.pkgDir == "kafka") &&
						!embedderExempt[[2]string{f.rel, ts.Name.Name}] {
						embedders[key{pkg, ts.Name.Name}] = f.rel
					}
				}
			case *ast.FuncDecl:
				if typ, ok := fieldsStringMethod(d, kafkaName, f.pkgDir == "kafka"); ok {
					hasString[key{pkg, typ}] = true
				}
			}
		}
	}
	if len(embedders) == 0 {
		t.Fatal("lint: found no struct embedding kafka.TopicPartition; the scan is broken")
	}
	for k, file := range embedders {
		if !hasString[k] {
			t.Errorf("%s: %s embeds kafka.TopicPartition but has no `String() string { return kafka.FieldsString(x) }`: "+
				"fmt would print it as the partition alone", file, k.typ)
		}
	}
}

// kafkaImportName is the name file f gives samsa/kafka ("" if not imported).
func kafkaImportName(f goFile) string {
	for _, imp := range f.ast.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/kafka" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "kafka"
		}
	}
	return ""
}

// embedsTopicPartition reports whether st has an embedded
// kafka.TopicPartition (TopicPartition inside package kafka).
func embedsTopicPartition(st *ast.StructType, kafkaName string, inKafka bool) bool {
	for _, field := range st.Fields.List {
		if len(field.Names) != 0 {
			continue
		}
		switch x := field.Type.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && kafkaName != "" && id.Name == kafkaName && x.Sel.Name == "TopicPartition" {
				return true
			}
		case *ast.Ident:
			if inKafka && x.Name == "TopicPartition" {
				return true
			}
		}
	}
	return false
}

// fieldsStringMethod reports the receiver type of d when d is
// `func (x T) String() string { return kafka.FieldsString(x) }`.
func fieldsStringMethod(d *ast.FuncDecl, kafkaName string, inKafka bool) (string, bool) {
	if d.Recv == nil || d.Name.Name != "String" || len(d.Recv.List) != 1 || len(d.Recv.List[0].Names) != 1 ||
		d.Body == nil || len(d.Body.List) != 1 {
		return "", false
	}
	recv, ok := d.Recv.List[0].Type.(*ast.Ident)
	if !ok {
		return "", false
	}
	ret, ok := d.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if arg, ok := call.Args[0].(*ast.Ident); !ok || arg.Name != d.Recv.List[0].Names[0].Name {
		return "", false
	}
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		id, ok := fn.X.(*ast.Ident)
		return recv.Name, ok && kafkaName != "" && id.Name == kafkaName && fn.Sel.Name == "FieldsString"
	case *ast.Ident:
		return recv.Name, inKafka && fn.Name == "FieldsString"
	}
	return "", false
}
