# kafka-python across a leader failover; run by TestCompatKafkaPythonFailover
# as /usr/bin/python3 compat_kafka_python_failover.py <bootstrap> <topic> <n>.
# It produces n records to partition 0 at a steady pace (the test kills the
# leader meanwhile), then reads the partition back. Prints "OK" last.
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

bs, topic, n = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
DEADLINE = time.time() + 25

p = KafkaProducer(bootstrap_servers=bs, acks="all", retries=100, retry_backoff_ms=100,
                  max_in_flight_requests_per_connection=1, request_timeout_ms=5000, metadata_max_age_ms=1000,
                  reconnect_backoff_ms=50)
futs = []
for i in range(n):
    futs.append(p.send(topic, value=b"%d" % i, partition=0))
    if i % 10 == 0:
        print("sent", i, flush=True)
    time.sleep(0.01)  # pacing, so that the failover happens mid-stream
p.flush(timeout=20)
for i, f in enumerate(futs):
    f.get(timeout=1)
p.close()
print("produced", n, flush=True)

c = KafkaConsumer(bootstrap_servers=bs, group_id=None, enable_auto_commit=False)
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek_to_beginning(tp)
seen, order, dups = set(), [], 0
while len(seen) < n:
    assert time.time() < DEADLINE, "consumed %d of %d" % (len(seen), n)
    for _, recs in c.poll(timeout_ms=300).items():
        for r in recs:
            v = int(r.value)
            if v in seen:
                dups += 1
                continue
            seen.add(v)
            order.append(v)
c.close()
assert order == list(range(n)), "records out of order"
print("duplicates", dups)
print("OK")
