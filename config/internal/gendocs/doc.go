// Command gendocs writes docs/configuration.md from config's key tables. It
// is run by "go generate ./config".
//
// Owns: nothing but the file write; the content comes from config.Markdown.
// Must never import anything of Samsa but config. Concurrency: none.
package main
