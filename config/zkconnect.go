package config

import (
	"fmt"
	"strings"
)

// ParseZKConnect splits a ZooKeeper connection string
// "host:port[,host:port...][/chroot]" into its servers and chroot. The
// chroot starts at the first '/'; "" and "/" mean no chroot. A chroot must
// be a valid ZooKeeper path: no trailing '/', no empty, "." or ".."
// segment. A server without a port gets 2181, as ZooKeeper's client does.
func ParseZKConnect(s string) (servers []string, chroot string, err error) {
	s = strings.TrimSpace(s)
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
	}
	if chroot == "/" {
		chroot = ""
	}
	if chroot != "" {
		if strings.HasSuffix(chroot, "/") {
			return nil, "", fmt.Errorf("config: zookeeper chroot %q must not end with '/'", chroot)
		}
		for _, seg := range strings.Split(chroot[1:], "/") {
			if seg == "" || seg == "." || seg == ".." {
				return nil, "", fmt.Errorf("config: zookeeper chroot %q has an empty, '.' or '..' segment", chroot)
			}
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if !strings.Contains(h, ":") || strings.HasSuffix(h, "]") {
			h += ":2181"
		}
		servers = append(servers, h)
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("config: zookeeper connection string %q names no server", s)
	}
	return servers, chroot, nil
}

// ZKConnect returns zookeeper.connect split into its host:port list and its
// chroot ("" when there is none).
func (b *Broker) ZKConnect() (servers []string, chroot string) {
	servers, chroot, _ = ParseZKConnect(b.RawZookeeperConnect)
	return servers, chroot
}

// ZKServers returns the host:port list of zookeeper.connect.
func (b *Broker) ZKServers() []string {
	servers, _, _ := ParseZKConnect(b.RawZookeeperConnect)
	return servers
}

// ZKChroot returns the chroot of zookeeper.connect, "" when there is none.
func (b *Broker) ZKChroot() string {
	_, chroot, _ := ParseZKConnect(b.RawZookeeperConnect)
	return chroot
}

// ZookeeperConnectionTimeoutMs returns zookeeper.connection.timeout.ms, or
// the session timeout when it is unset.
func (b *Broker) ZookeeperConnectionTimeoutMs() int32 {
	if b.RawZookeeperConnectionTimeoutMs != nil {
		return *b.RawZookeeperConnectionTimeoutMs
	}
	return b.ZookeeperSessionTimeoutMs
}
