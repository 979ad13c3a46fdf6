# kafka-python's broad surface against a Samsa cluster; run by
# TestCompatKafkaPython (broker/compat_python_test.go) as
#   /usr/bin/python3 compat_kafka_python.py <bootstrap> <broker id>
# Every check is an assert; the script prints "OK" last when all passed.
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError, UnknownTopicOrPartitionError

bs = sys.argv[1].split(",")
broker_id = sys.argv[2]
DEADLINE = time.time() + 25


def step(name):
    print("step", name, flush=True)


def wait(cond, what):
    while True:
        v = cond()
        if v:
            return v
        assert time.time() < DEADLINE, "timed out waiting for " + what
        time.sleep(0.05)


def configs_of(resp):
    # DescribeConfigs response: resources [(error_code, error_message,
    # resource_type, resource_name, config_entries)]; config entry:
    # (name, value, read_only, ...).
    out = {}
    for res in resp.resources:
        assert res[0] == 0, res
        for e in res[4]:
            out[e[0]] = e[1]
    return out


step("admin create topics")
admin = KafkaAdminClient(bootstrap_servers=bs, request_timeout_ms=20000)
resp = admin.create_topics([NewTopic("pa", 2, 1, topic_configs={"retention.ms": "3600000"}),
                            NewTopic("pb", 1, 1)], timeout_ms=10000)
assert all(e[1] == 0 for e in resp.topic_errors), resp
try:
    admin.create_topics([NewTopic("pb", 1, 1)], timeout_ms=10000)
    raise AssertionError("creating pb twice succeeded")
except TopicAlreadyExistsError:
    pass
assert {"pa", "pb"} <= set(admin.list_topics())

step("admin describe cluster and topics")
cl = admin.describe_cluster()
assert cl["controller_id"] >= 1 and len(cl["brokers"]) >= 1, cl
desc = admin.describe_topics(["pa"])
assert len(desc) == 1 and desc[0]["error_code"] == 0 and len(desc[0]["partitions"]) == 2, desc

step("admin create partitions")
resp = admin.create_partitions({"pa": NewPartitions(4)}, timeout_ms=10000)
assert all(e[1] == 0 for e in resp.topic_errors), resp
wait(lambda: len(admin.describe_topics(["pa"])[0]["partitions"]) == 4 and
     all(p["leader"] >= 0 for p in admin.describe_topics(["pa"])[0]["partitions"]), "4 partitions")

step("admin describe/alter configs")
cfg = configs_of(admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "pa")])[0])
assert cfg["retention.ms"] == "3600000" and cfg["cleanup.policy"] == "delete", cfg
resp = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "pa", configs={"retention.ms": "7200000"})])
assert all(r[0] == 0 for r in resp.resources), resp
cfg = configs_of(admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "pa")])[0])
assert cfg["retention.ms"] == "7200000", cfg
bcfg = configs_of(admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, broker_id)])[0])
assert bcfg["num.partitions"] == "1" and "log.retention.hours" in bcfg, sorted(bcfg)[:20]

step("produce acks=all gzip with timestamps and headers")
base = int(time.time() * 1000) - 3600 * 1000
p = KafkaProducer(bootstrap_servers=bs, acks="all", compression_type="gzip", linger_ms=20, retries=5)
futs = [p.send("pa", key=b"k%d" % i, value=b"v%d" % i, partition=i % 4, timestamp_ms=base + i * 1000,
               headers=[("h", b"x%d" % i)]) for i in range(40)]
p.flush()
for i, f in enumerate(futs):
    md = f.get(timeout=10)
    assert md.partition == i % 4 and md.offset == i // 4, (i, md)
# A tombstone and a record without a key.
p.send("pb", key=b"gone", value=None).get(timeout=10)
p.send("pb", value=b"nokey").get(timeout=10)
p.close()

step("group consume and commit")
c = KafkaConsumer(bootstrap_servers=bs, group_id="pg", enable_auto_commit=False, auto_offset_reset="earliest",
                  client_id="py-member")
c.subscribe(["pa"])
got = {}
while len(got) < 40:
    assert time.time() < DEADLINE, "consumed %d of 40" % len(got)
    for tp, recs in c.poll(timeout_ms=500).items():
        for r in recs:
            got[r.value] = r
for i in range(40):
    r = got[b"v%d" % i]
    assert r.key == b"k%d" % i and r.timestamp == base + i * 1000 and r.headers == [("h", b"x%d" % i)], r
    assert r.partition == i % 4 and r.offset == i // 4, r
c.commit()
tps = [TopicPartition("pa", i) for i in range(4)]
assert all(c.committed(tp) == 10 for tp in tps), [c.committed(tp) for tp in tps]

step("end_offsets, beginning_offsets, offsets_for_times")
assert c.end_offsets(tps) == {tp: 10 for tp in tps}, c.end_offsets(tps)
assert c.beginning_offsets(tps) == {tp: 0 for tp in tps}, c.beginning_offsets(tps)
ot = c.offsets_for_times({tp: base + 20 * 1000 for tp in tps})
for tp in tps:
    # Partition p holds records i = p, p+4, ...; the first at or after
    # timestamp base+20 s is i = 20+p, at offset 5.
    assert ot[tp].offset == 5 and ot[tp].timestamp == base + (20 + tp.partition) * 1000, ot
ot = c.offsets_for_times({tps[0]: int(time.time() * 1000) + 3600 * 1000})
assert ot[tps[0]] is None, ot

step("admin groups while a member is active")
groups = admin.list_consumer_groups()
assert ("pg", "consumer") in groups, groups
dg = admin.describe_consumer_groups(["pg"])
assert len(dg) == 1 and dg[0].state == "Stable" and dg[0].protocol_type == "consumer", dg
assert len(dg[0].members) == 1 and dg[0].members[0].client_id == "py-member", dg
assign = dg[0].members[0].member_assignment
assert sorted(assign.partitions()) == [("pa", i) for i in range(4)], assign
offs = admin.list_consumer_group_offsets("pg")
assert {tp: o.offset for tp, o in offs.items()} == {tp: 10 for tp in tps}, offs
offs = admin.list_consumer_group_offsets("pg", partitions=[tps[1], TopicPartition("pa", 9)])
assert offs[tps[1]].offset == 10 and offs[TopicPartition("pa", 9)].offset == -1, offs
res = admin.delete_consumer_groups(["pg"])
assert res[0][0] == "pg" and res[0][1].errno == 68, res  # NON_EMPTY_GROUP
c.close()

step("seek with a manually assigned consumer")
m = KafkaConsumer(bootstrap_servers=bs, group_id=None, enable_auto_commit=False)
m.assign([tps[2]])
m.seek_to_end(tps[2])
assert m.position(tps[2]) == 10
m.seek_to_beginning(tps[2])
assert m.position(tps[2]) == 0
m.seek(tps[2], 7)
recs = []
while len(recs) < 3:
    assert time.time() < DEADLINE, "seek consumed %d" % len(recs)
    for _, rs in m.poll(timeout_ms=500).items():
        recs.extend(rs)
assert [r.offset for r in recs] == [7, 8, 9] and recs[0].value == b"v30", recs
m.assign([TopicPartition("pb", 0)])
m.seek_to_beginning()
recs = []
while len(recs) < 2:
    assert time.time() < DEADLINE, "pb consumed %d" % len(recs)
    for _, rs in m.poll(timeout_ms=500).items():
        recs.extend(rs)
assert recs[0].key == b"gone" and recs[0].value is None and recs[1].key is None and recs[1].value == b"nokey", recs
m.close()

step("admin extras: replica assignments, validate only, synonyms")
resp = admin.create_topics([NewTopic("pc", -1, -1, replica_assignments={0: [int(broker_id)], 1: [int(broker_id)]})],
                           timeout_ms=10000)
assert all(e[1] == 0 for e in resp.topic_errors), resp
wait(lambda: len(admin.describe_topics(["pc"])[0]["partitions"]) == 2 and
     all(p["leader"] == int(broker_id) and p["replicas"] == [int(broker_id)]
         for p in admin.describe_topics(["pc"])[0]["partitions"]), "pc on broker " + broker_id)
resp = admin.create_topics([NewTopic("pvalidate", 1, 1)], timeout_ms=10000, validate_only=True)
assert all(e[1] == 0 for e in resp.topic_errors), resp
assert "pvalidate" not in admin.list_topics()
resp = admin.create_partitions({"pc": NewPartitions(3, [[int(broker_id)]])}, timeout_ms=10000)
assert all(e[1] == 0 for e in resp.topic_errors), resp
resp = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "pa")], include_synonyms=True)[0]
entries = {e[0]: e for e in resp.resources[0][4]}
assert entries["retention.ms"][1] == "7200000", entries["retention.ms"]

step("admin delete empty group and topic")
res = admin.delete_consumer_groups(["pg"])
assert res[0][0] == "pg" and res[0][1].errno == 0, res
assert ("pg", "consumer") not in admin.list_consumer_groups()
resp = admin.delete_topics(["pb"], timeout_ms=10000)
assert all(e[1] == 0 for e in resp.topic_error_codes), resp
wait(lambda: "pb" not in admin.list_topics(), "pb deleted")
try:
    admin.delete_topics(["nope"], timeout_ms=10000)
    raise AssertionError("deleting an unknown topic succeeded")
except UnknownTopicOrPartitionError:
    pass
admin.close()
print("OK")
