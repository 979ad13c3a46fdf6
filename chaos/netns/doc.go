// Package netns builds the chaos harness's network out of Linux network
// namespaces and cuts it on demand.
//
// Layout (prefix P, default "samsa-chaos"):
//
//	namespace P-sw        bridge "br0"; one port "p-<node>" per node, plus "p-root"
//	namespace P-<node>    veth "eth0" (the peer of p-<node>), address 10.77.0.X/24, lo up
//	root namespace        veth "P0" (the peer of p-root), 10.77.0.254/24: the clients
//
// The only route to 10.77.0.0/24 in the root namespace is the link route of
// P0; node namespaces have no default route, so nothing leaves the
// namespaces. Names stay under 16 bytes (IFNAMSIZ).
//
// Faults are iptables rules in the receiving node's namespace (silent DROP
// on INPUT, so TCP sees a black hole, not a reset or EPERM) and tbf qdiscs
// on a node's egress:
//
//   - Cut(a, b): both directions between two nodes (a DROP in each).
//   - Loss(from, to, p): one way: to drops a fraction p of from's packets
//     (iptables statistic match). The kernel here has no netem.
//   - Slow(node, rate): node's egress limited by tbf; under load that is
//     delay (the 500 ms queue) and then loss. Stands in for netem delay.
//
// The root address (the clients) is never cut: as in Jepsen's partition
// nemesis, clients reach every server and the servers are split among
// themselves. HealAll removes every rule and qdisc; Cleanup removes every
// namespace and link with the prefix, for the leftovers of a crashed run.
package netns
