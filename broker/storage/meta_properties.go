package storage

// meta.properties in each log directory root records which broker and
// cluster the directory belongs to (Kafka BrokerMetadataCheckpoint). It is a
// Java properties file:
//
//	#
//	#Thu Jun 10 12:00:00 UTC 2021
//	version=0
//	broker.id=1
//	cluster.id=Kc7R0hZsQpWm0j1dVhXb3g
//
// ZooKeeper mode uses version 0 (a missing version means 0); cluster.id is
// written from Kafka 2.4 on.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"samsa/javaprops"
)

// maxPropertiesBytes bounds a meta.properties file. Real ones are ~100 bytes.
const maxPropertiesBytes = 64 << 10

// MetaPropertiesFile is the name of the broker metadata file in a log dir root.
const MetaPropertiesFile = "meta.properties"

// javaDateLayout is java.util.Date.toString's format, used by
// Properties.store for its date comment.
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

// Errors returned by the meta.properties checks. Each matches one Kafka
// startup failure.
var (
	// ErrInconsistentBrokerID: the configured broker.id differs from the
	// stored one (Kafka InconsistentBrokerIdException).
	ErrInconsistentBrokerID = errors.New("storage: inconsistent broker id")
	// ErrInconsistentClusterID: the cluster's id differs from the stored one
	// (Kafka InconsistentClusterIdException).
	ErrInconsistentClusterID = errors.New("storage: inconsistent cluster id")
	// ErrInconsistentBrokerMetadata: log dirs disagree about the broker
	// (Kafka InconsistentBrokerMetadataException).
	ErrInconsistentBrokerMetadata = errors.New("storage: inconsistent broker metadata")
	// ErrMalformedMetaProperties: meta.properties cannot be parsed or has a
	// version or value ZooKeeper mode does not accept.
	ErrMalformedMetaProperties = errors.New("storage: malformed meta.properties")
)

// MetaProperties is the content of meta.properties in ZooKeeper mode.
type MetaProperties struct {
	// Version is the file format version; ZooKeeper mode reads and writes 0.
	Version int32
	// BrokerID is broker.id; -1 when the file has none.
	BrokerID int32
	// ClusterID is cluster.id; empty when the file has none (before 2.4).
	ClusterID string
}

// ParseMetaProperties parses a meta.properties file. name labels errors.
// A missing version is 0 and a missing broker.id is -1, as Kafka reads them;
// a version other than 0 (for example KRaft's 1) is refused because
// ZooKeeper-mode brokers only support version 0. Errors wrap
// ErrMalformedMetaProperties.
func ParseMetaProperties(data []byte, name string) (MetaProperties, error) {
	bad := func(format string, args ...any) (MetaProperties, error) {
		return MetaProperties{}, fmt.Errorf("%w %s: %s", ErrMalformedMetaProperties, name, fmt.Sprintf(format, args...))
	}
	if len(data) > maxPropertiesBytes {
		return bad("larger than %d bytes", maxPropertiesBytes)
	}
	// Kafka reads meta.properties with Properties.load(InputStream): bytes
	// are ISO-8859-1.
	props, err := javaprops.LoadLatin1(data)
	var se *javaprops.SyntaxError
	if errors.As(err, &se) {
		return bad("line %d: %v", se.Line, se.Err)
	}
	if err != nil {
		return bad("%v", err)
	}
	m := MetaProperties{Version: 0, BrokerID: -1}
	if v, ok := props["version"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return bad("bad version %q", v)
		}
		if n != 0 {
			return bad("found unexpected version %d; ZooKeeper-mode brokers only support version 0", n)
		}
	}
	if v, ok := props["broker.id"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return bad("bad broker.id %q", v)
		}
		m.BrokerID = int32(n)
	}
	m.ClusterID = props["cluster.id"]
	return m, nil
}

// EncodeMetaProperties returns the file Kafka's Properties.store writes for
// m: an empty "#" comment line, the date comment, then version, broker.id
// (when >= 0) and cluster.id (when set), escaped as Java does. now is the
// date written in the comment.
func EncodeMetaProperties(m MetaProperties, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("#\n#")
	b.WriteString(now.Format(javaDateLayout))
	b.WriteByte('\n')
	kv := func(k, v string) {
		b.WriteString(javaprops.Escape(k, true))
		b.WriteByte('=')
		b.WriteString(javaprops.Escape(v, false))
		b.WriteByte('\n')
	}
	kv("version", strconv.FormatInt(int64(m.Version), 10))
	if m.BrokerID >= 0 {
		kv("broker.id", strconv.FormatInt(int64(m.BrokerID), 10))
	}
	if m.ClusterID != "" {
		kv("cluster.id", m.ClusterID)
	}
	return b.Bytes()
}

// ReadMetaProperties reads dir/meta.properties. found is false (and err nil)
// when the file does not exist. Like Kafka it first removes a leftover
// meta.properties.tmp from an interrupted write. I/O errors wrap ErrStorage;
// content errors wrap ErrMalformedMetaProperties.
func ReadMetaProperties(fsys FS, dir string) (m MetaProperties, found bool, err error) {
	path := filepath.Join(dir, MetaPropertiesFile)
	if err := fsys.Remove(path + TmpFileSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return MetaProperties{}, false, storageError("remove "+path+TmpFileSuffix, err)
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return MetaProperties{}, false, nil
	}
	if err != nil {
		return MetaProperties{}, false, storageError("open "+path, err)
	}
	defer f.Close()
	// Read one byte past the bound so an oversized file is detected, not cut.
	data, err := io.ReadAll(io.NewSectionReader(f, 0, maxPropertiesBytes+1))
	if err != nil {
		return MetaProperties{}, false, storageError("read "+path, err)
	}
	m, err = ParseMetaProperties(data, path)
	if err != nil {
		return MetaProperties{}, true, err
	}
	return m, true, nil
}

// WriteMetaProperties atomically writes dir/meta.properties (through
// meta.properties.tmp, fsync, rename, directory fsync). now dates the
// comment line. It blocks on fsync; I/O errors wrap ErrStorage.
func WriteMetaProperties(fsys FS, dir string, m MetaProperties, now time.Time) error {
	cf := NewCheckpointFile(fsys, filepath.Join(dir, MetaPropertiesFile))
	return cf.Write(EncodeMetaProperties(m, now))
}

// CheckBrokerID returns an error wrapping ErrInconsistentBrokerID when
// broker.id is configured (>= 0) and m records a different one; Kafka's
// message is kept so operators recognise it.
func (m MetaProperties) CheckBrokerID(brokerID int32) error {
	if brokerID >= 0 && m.BrokerID >= 0 && m.BrokerID != brokerID {
		return fmt.Errorf("%w: configured broker.id %d doesn't match stored broker.id %d in meta.properties. "+
			"If you moved your data, make sure your configured broker.id matches. "+
			"If you intend to create a new broker, you should remove all data in your data directories (log.dirs)",
			ErrInconsistentBrokerID, brokerID, m.BrokerID)
	}
	return nil
}

// CheckClusterID returns an error wrapping ErrInconsistentClusterID when m
// records a cluster id that differs from clusterID (the id stored in
// ZooKeeper's /cluster/id).
func (m MetaProperties) CheckClusterID(clusterID string) error {
	if m.ClusterID != "" && m.ClusterID != clusterID {
		return fmt.Errorf("%w: the Cluster ID %s doesn't match stored clusterId %s in meta.properties. "+
			"The broker is trying to join the wrong cluster. Configured zookeeper.connect may be wrong",
			ErrInconsistentClusterID, clusterID, m.ClusterID)
	}
	return nil
}

// MergeMetaProperties checks that every log dir that has a meta.properties
// (byDir maps dir → its content) records the same broker metadata, as
// Kafka's getBrokerMetadataAndOfflineDirs requires, and returns it. With no
// entries it returns {Version 0, BrokerID -1}. A disagreement returns an
// error wrapping ErrInconsistentBrokerMetadata that lists every dir.
func MergeMetaProperties(byDir map[string]MetaProperties) (MetaProperties, error) {
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		return MetaProperties{BrokerID: -1}, nil
	}
	first := byDir[dirs[0]]
	for _, d := range dirs[1:] {
		if byDir[d] != first {
			var b strings.Builder
			for _, d := range dirs {
				m := byDir[d]
				fmt.Fprintf(&b, "\n- %s -> {version=%d, broker.id=%d, cluster.id=%s}", d, m.Version, m.BrokerID, m.ClusterID)
			}
			return MetaProperties{}, fmt.Errorf("%w: BrokerMetadata is not consistent across log.dirs. "+
				"This could happen if multiple brokers shared a log directory (log.dirs) "+
				"or partial data was manually copied from another broker. Found:%s",
				ErrInconsistentBrokerMetadata, b.String())
		}
	}
	return first, nil
}
