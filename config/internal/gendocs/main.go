package main

import (
	"flag"
	"fmt"
	"os"

	"samsa/config"
)

func main() {
	out := flag.String("out", "../docs/configuration.md", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, config.Markdown(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
