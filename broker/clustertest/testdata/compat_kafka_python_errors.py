# kafka-python's error paths and old protocol versions against a Samsa
# cluster with auto.create.topics.enable=true; run by
# TestCompatKafkaPythonErrors as
#   /usr/bin/python3 compat_kafka_python_errors.py <bootstrap>
# Prints "OK" last when every assert passed.
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import MessageSizeTooLargeError

bs = sys.argv[1].split(",")
DEADLINE = time.time() + 25


def step(name):
    print("step", name, flush=True)


def drain(consumer, n, what):
    recs = []
    while len(recs) < n:
        assert time.time() < DEADLINE, "%s: consumed %d of %d" % (what, len(recs), n)
        for _, rs in consumer.poll(timeout_ms=300).items():
            recs.extend(rs)
    return recs


step("auto-create on produce")
p = KafkaProducer(bootstrap_servers=bs, acks="all", retries=10, retry_backoff_ms=100)
md = p.send("auto-py", value=b"first").get(timeout=20)
assert md.topic == "auto-py" and md.offset == 0, md

step("message too large")
admin = KafkaAdminClient(bootstrap_servers=bs, request_timeout_ms=20000)
resp = admin.create_topics([NewTopic("small", 1, 1, topic_configs={"max.message.bytes": "2000"})], timeout_ms=10000)
assert all(e[1] == 0 for e in resp.topic_errors), resp
p.send("small", value=b"x" * 100).get(timeout=20)
try:
    p.send("small", value=b"x" * 5000).get(timeout=20)
    raise AssertionError("a 5000-byte record went into a topic with max.message.bytes=2000")
except MessageSizeTooLargeError:
    pass
p.send("small", value=b"y" * 100).get(timeout=20)

step("offset out of range resets")
for reset, want in (("earliest", [b"x" * 100, b"y" * 100]), ("latest", [])):
    c = KafkaConsumer(bootstrap_servers=bs, group_id=None, auto_offset_reset=reset, enable_auto_commit=False)
    tp = TopicPartition("small", 0)
    c.assign([tp])
    c.seek(tp, 1000)
    if want:
        recs = drain(c, len(want), "reset " + reset)
        assert [r.value for r in recs] == want and recs[0].offset == 0, recs
    else:
        c.poll(timeout_ms=1000)
        deadline = time.time() + 10
        while c.position(tp) != 2:
            assert time.time() < deadline, c.position(tp)
            c.poll(timeout_ms=200)
    c.close()

step("old protocol versions")
for api in ((0, 8, 2), (0, 9), (0, 10, 0), (0, 10, 1), (0, 11), (1, 0), (2, 0)):
    name = "old-" + "-".join(map(str, api))
    admin.create_topics([NewTopic(name, 2, 1)], timeout_ms=10000)
    op = KafkaProducer(bootstrap_servers=bs, api_version=api, acks="all", retries=10, retry_backoff_ms=100,
                       compression_type="gzip" if api >= (0, 10) else None)
    for i in range(6):
        op.send(name, key=b"k%d" % i, value=b"v%d" % i, partition=i % 2).get(timeout=20)
    op.close()
    group = None if api < (0, 9) else "g-" + name
    oc = KafkaConsumer(bootstrap_servers=bs, api_version=api, group_id=group, auto_offset_reset="earliest",
                       enable_auto_commit=False)
    if group is None:
        oc.assign([TopicPartition(name, 0), TopicPartition(name, 1)])
    else:
        oc.subscribe([name])
    recs = drain(oc, 6, name)
    assert sorted(r.value for r in recs) == [b"v%d" % i for i in range(6)], recs
    if api >= (0, 10):
        assert all(r.timestamp > 0 for r in recs), recs
    if group is not None:
        oc.commit()
        assert oc.committed(TopicPartition(name, 0)) == 3, oc.committed(TopicPartition(name, 0))
    oc.close()
    if group is not None:
        # A new member of the group resumes at the committed offsets.
        p.send(name, value=b"after", partition=1).get(timeout=20)
        oc = KafkaConsumer(bootstrap_servers=bs, api_version=api, group_id=group, auto_offset_reset="earliest",
                           enable_auto_commit=False)
        oc.subscribe([name])
        recs = drain(oc, 1, name + " resume")
        assert [r.value for r in recs] == [b"after"], recs
        oc.close()
p.close()
admin.close()
print("OK")
