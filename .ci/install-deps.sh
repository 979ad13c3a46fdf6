#!/usr/bin/env bash
# Installs what Samsa's tests need on a fresh Debian machine: the real ZooKeeper (Debian's
# package), kcat, kafka-python, confluent-kafka-python and (from the npm registry) KafkaJS.
# Go itself comes with the machine.
set -euo pipefail
need=()
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v kcat >/dev/null 2>&1 || need+=(kcat)
/usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || need+=(python3-kafka)
/usr/bin/python3 -c 'import confluent_kafka' >/dev/null 2>&1 || need+=(python3-confluent-kafka)
command -v npm >/dev/null 2>&1 || need+=(npm)
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
# KafkaJS (TestCompatKafkaJS) lives in .build/node, outside the module; the version is the
# test's kafkajsVersion.
[ -f .build/node/node_modules/kafkajs/package.json ] ||
	npm install --silent --no-audit --no-fund --prefix .build/node kafkajs@2.2.4 >/dev/null
echo "deps ok: $(command -v iptables), zookeeper $(ls /usr/share/java/zookeeper-3*.jar 2>/dev/null | head -1), $(command -v kcat), kafka-python $(/usr/bin/python3 -c 'import kafka; print(kafka.__version__)'), confluent-kafka $(/usr/bin/python3 -c 'import confluent_kafka; print(confluent_kafka.version()[0])'), kafkajs $(node -p 'require("./.build/node/node_modules/kafkajs/package.json").version')"
