# confluent-kafka-python (librdkafka) against a Samsa cluster; run by
# TestCompatConfluentKafka (compat_confluent_test.go) as
#   /usr/bin/python3 compat_confluent_kafka.py <bootstrap> <replication factor>
# What kcat cannot drive: librdkafka's AdminClient, its idempotent producer's
# delivery reports, its transactional producer (commit, abort,
# send_offsets_to_transaction, fencing by a second instance) and
# read_committed consumers. Every check is an assert; the script prints "OK"
# last when all passed.
import sys
import time

from confluent_kafka import (Consumer, KafkaError, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import (AdminClient, ConfigResource, NewPartitions,
                                   NewTopic)

bs = sys.argv[1]
rf = int(sys.argv[2])
STARTED = time.time()
DEADLINE = STARTED + 50


def step(name):
    print("step", name, "(%.1f s)" % (time.time() - STARTED), flush=True)


def left():
    t = DEADLINE - time.time()
    assert t > 0, "out of time"
    return t


def wait(cond, what):
    while True:
        v = cond()
        if v:
            return v
        assert time.time() < DEADLINE, "timed out waiting for " + what
        time.sleep(0.05)


def consume_all(conf, topic, partitions, want, what):
    """Reads topic from the beginning until want records came (or the
    deadline), then returns [(partition, offset, value)]."""
    c = Consumer(dict(conf, **{"bootstrap.servers": bs, "enable.auto.commit": False,
                               "group.id": "cf-read-" + what}))
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got = []
    while len(got) < want and time.time() < DEADLINE:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            continue
        got.append((m.partition(), m.offset(), m.value()))
    # A little longer: nothing beyond want may come.
    end = time.time() + 1
    while time.time() < end:
        m = c.poll(0.1)
        if m is not None and not m.error():
            got.append((m.partition(), m.offset(), m.value()))
    c.close()
    return got


step("admin create topics")
admin = AdminClient({"bootstrap.servers": bs})
fs = admin.create_topics([NewTopic("cf-idem", 3, rf), NewTopic("cf-txn", 2, rf),
                          NewTopic("cf-src", 1, rf, config={"retention.ms": "3600000"})],
                         operation_timeout=10)
for t, f in fs.items():
    f.result(timeout=left())
try:
    admin.create_topics([NewTopic("cf-src", 1, rf)])["cf-src"].result(timeout=left())
    raise AssertionError("creating cf-src twice succeeded")
except KafkaException as e:
    assert e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS, e
md = wait(lambda: (lambda m: m if all(len(m.topics.get(t, {}).partitions if t in m.topics else {}) == n
                                          and all(p.leader >= 0 for p in m.topics[t].partitions.values())
                                          for t, n in (("cf-idem", 3), ("cf-txn", 2), ("cf-src", 1))) else None)
          (admin.list_topics(timeout=left())), "topic leaders")
assert md.controller_id >= 0 and len(md.brokers) >= 1, md

step("admin configs and partitions")
res = admin.describe_configs([ConfigResource("topic", "cf-src")])
cfg = list(res.values())[0].result(timeout=left())
assert cfg["retention.ms"].value == "3600000", cfg["retention.ms"]
assert cfg["cleanup.policy"].value == "delete", cfg["cleanup.policy"]
admin.create_partitions([NewPartitions("cf-src", 2)])["cf-src"].result(timeout=left())
wait(lambda: len(admin.list_topics("cf-src", timeout=left()).topics["cf-src"].partitions) == 2, "2 partitions")

step("idempotent producer, acks=all, zstd")
reports = []
p = Producer({"bootstrap.servers": bs, "enable.idempotence": True, "compression.type": "zstd",
              "linger.ms": 5, "max.in.flight.requests.per.connection": 5})
for i in range(3000):
    while True:
        try:
            p.produce("cf-idem", value=b"v%d" % i, key=b"k%d" % (i % 7), partition=i % 3,
                      on_delivery=lambda err, msg: reports.append((err, msg.partition(), msg.offset(), msg.value())))
            break
        except BufferError:
            p.poll(0.05)
    p.poll(0)
assert p.flush(left()) == 0, "idempotent producer did not flush"
errs = [r for r in reports if r[0] is not None]
assert not errs and len(reports) == 3000, (len(reports), errs[:3])
for part in range(3):
    offs = [r[2] for r in reports if r[1] == part]
    assert offs == list(range(1000)), "partition %d offsets not 0..999" % part
got = consume_all({}, "cf-idem", 3, 3000, "idem")
assert len(got) == 3000 and len(set(v for _, _, v in got)) == 3000, len(got)

step("transactions: commit and abort")
tp = Producer({"bootstrap.servers": bs, "transactional.id": "cf-tx-1", "linger.ms": 5})
tp.init_transactions(left())
tp.begin_transaction()
for i in range(10):
    tp.produce("cf-txn", value=b"c1-%d" % i, partition=i % 2)
tp.commit_transaction(left())
tp.begin_transaction()
for i in range(10):
    tp.produce("cf-txn", value=b"a1-%d" % i, partition=i % 2)
tp.flush(left())
tp.abort_transaction(left())
tp.begin_transaction()
for i in range(10):
    tp.produce("cf-txn", value=b"c2-%d" % i, partition=i % 2)
tp.commit_transaction(left())
# read_committed: the 20 committed records, none of the aborted ones;
# read_uncommitted: all 30 (control records are never handed out).
rc = consume_all({"isolation.level": "read_committed"}, "cf-txn", 2, 20, "rc")
vals = sorted(v for _, _, v in rc)
assert vals == sorted([b"c1-%d" % i for i in range(10)] + [b"c2-%d" % i for i in range(10)]), vals
ru = consume_all({"isolation.level": "read_uncommitted"}, "cf-txn", 2, 30, "ru")
assert len(ru) == 30 and sum(1 for _, _, v in ru if v.startswith(b"a1-")) == 10, len(ru)
# Each transaction ended with a control record: per partition 3 markers
# around 15 data records, so the offsets reach 17 (0-based) and skip 3.
lo, hi = Consumer({"bootstrap.servers": bs, "group.id": "cf-wm"}).get_watermark_offsets(
    TopicPartition("cf-txn", 0), timeout=left())
assert (lo, hi) == (0, 18), (lo, hi)

step("consume-transform-produce with send_offsets_to_transaction")
src = Producer({"bootstrap.servers": bs, "acks": "all"})
for i in range(20):
    src.produce("cf-src", value=b"in-%d" % i, partition=0)
assert src.flush(left()) == 0
cons = Consumer({"bootstrap.servers": bs, "group.id": "cf-ctp", "enable.auto.commit": False,
                 "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
cons.subscribe(["cf-src"])
ctp = Producer({"bootstrap.servers": bs, "transactional.id": "cf-ctp-1"})
ctp.init_transactions(left())
done = 0
while done < 20:
    msgs = cons.consume(10, timeout=min(1.0, left()))
    msgs = [m for m in msgs if not m.error()]
    if not msgs:
        continue
    ctp.begin_transaction()
    for m in msgs:
        ctp.produce("cf-txn", value=b"out-" + m.value(), partition=0)
    ctp.send_offsets_to_transaction(cons.position(cons.assignment()), cons.consumer_group_metadata(), left())
    ctp.commit_transaction(left())
    done += len(msgs)
assert done == 20, done
committed = cons.committed([TopicPartition("cf-src", 0)], timeout=left())
assert committed[0].offset == 20, committed
cons.close()

step("fencing: a second instance of the transactional id")
z = Producer({"bootstrap.servers": bs, "transactional.id": "cf-tx-1"})
z.init_transactions(left())
try:
    tp.begin_transaction()
    tp.produce("cf-txn", value=b"zombie", partition=0)
    tp.commit_transaction(left())
    raise AssertionError("the fenced producer committed")
except KafkaException as e:
    err = e.args[0]
    assert err.fatal() or err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                          KafkaError.INVALID_PRODUCER_EPOCH), err
z.begin_transaction()
z.produce("cf-txn", value=b"after-fence", partition=1)
z.commit_transaction(left())
rc = consume_all({"isolation.level": "read_committed"}, "cf-txn", 2, 41, "rc2")
vals = [v for _, _, v in rc]
assert b"zombie" not in vals and b"after-fence" in vals and len(vals) == 41, len(vals)

step("admin delete topics")
for t, f in admin.delete_topics(["cf-src"], operation_timeout=10).items():
    f.result(timeout=left())
wait(lambda: "cf-src" not in admin.list_topics(timeout=left()).topics, "cf-src deleted")
print("OK", flush=True)
