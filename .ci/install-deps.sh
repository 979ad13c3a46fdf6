#!/usr/bin/env bash
# Installs what Samsa's tests need on a fresh Debian machine: the real ZooKeeper (Debian's
# package), kcat and kafka-python. Go itself comes with the machine.
set -euo pipefail
need=()
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v kcat >/dev/null 2>&1 || need+=(kcat)
/usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || need+=(python3-kafka)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
# The reliability harness (bin/samsa-chaos.sh) cuts links with iptables inside its namespaces.
command -v iptables >/dev/null 2>&1 || need+=(iptables)
# keytool makes the JKS/PKCS12 keystores of the TLS tests; ZooKeeper's TLS port needs netty.
command -v keytool >/dev/null 2>&1 || need+=(default-jre-headless)
[ -f /usr/share/java/netty-codec.jar ] || need+=(libnetty-java)
if [ ${#need[@]} -gt 0 ]; then
	echo "installing: ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "deps ok: $(command -v iptables), zookeeper $(ls /usr/share/java/zookeeper-3*.jar 2>/dev/null | head -1), $(command -v kcat), kafka-python $(/usr/bin/python3 -c 'import kafka; print(kafka.__version__)')"
