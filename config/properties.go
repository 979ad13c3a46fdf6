package config

// Properties files and overrides: ReadPropertiesFile (bounded, over javaprops.Load),
// ParseOverrides and Merge.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"samsa/javaprops"
)

// maxPropertiesBytes bounds a properties file: server.properties is a few
// kilobytes, so anything near this size is a mistake, not a configuration.
const maxPropertiesBytes = 16 << 20

// ReadPropertiesFile reads and parses a properties file as UTF-8 text
// (javaprops.Load, Properties.load(Reader)). A malformed \uXXXX escape is a
// *javaprops.SyntaxError naming the line (errors.Is javaprops.ErrMalformedEscape).
func ReadPropertiesFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPropertiesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > maxPropertiesBytes {
		return nil, fmt.Errorf("config: %s is larger than the %d bytes allowed for a properties file", path, maxPropertiesBytes)
	}
	props, err := javaprops.Load(data)
	if err != nil {
		return nil, fmt.Errorf("config: %w in %s", err, path)
	}
	return props, nil
}

// ParseOverrides turns command-line overrides of the form "key=value" (as
// given to kafka-server-start.sh --override) into a map. The value may
// contain '='; the key must not be empty. All bad entries are reported
// together.
func ParseOverrides(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	var errs []error
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("config: invalid override %q: expected key=value", a))
			continue
		}
		out[k] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Merge returns a new map holding base with every entry of overrides applied
// on top. Neither argument is modified.
func Merge(base, overrides map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(overrides))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overrides {
		out[k] = v
	}
	return out
}
