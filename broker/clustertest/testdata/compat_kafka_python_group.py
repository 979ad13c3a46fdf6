# Two kafka-python group members rebalancing (JoinGroup/SyncGroup/Heartbeat
# at kafka-python's versions) with each assignor; run by
# TestCompatKafkaPythonGroup as
#   /usr/bin/python3 compat_kafka_python_group.py <bootstrap>
# Prints "OK" last.
import sys
import threading
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

bs = sys.argv[1].split(",")
DEADLINE = time.time() + 25


class Member(threading.Thread):
    def __init__(self, group, topic, assignor):
        super().__init__(daemon=True)
        self.c = KafkaConsumer(bootstrap_servers=bs, group_id=group, auto_offset_reset="earliest",
                               partition_assignment_strategy=[assignor], heartbeat_interval_ms=200,
                               session_timeout_ms=10000, enable_auto_commit=True, auto_commit_interval_ms=100)
        self.c.subscribe([topic])
        self.values = set()
        self.assigned = 0
        self.stop = False
        self.lock = threading.Lock()

    def run(self):
        while not self.stop:
            recs = self.c.poll(timeout_ms=100)
            with self.lock:
                for _, rs in recs.items():
                    for r in rs:
                        self.values.add(r.value)
                self.assigned = len(self.c.assignment())
        self.c.close()

    def state(self):
        with self.lock:
            return len(self.values), self.assigned


def wait(cond, what):
    while not cond():
        assert time.time() < DEADLINE, "timed out: " + what()
        time.sleep(0.05)


admin = KafkaAdminClient(bootstrap_servers=bs)
p = KafkaProducer(bootstrap_servers=bs, acks="all")
# kafka-python 2.0.2's sticky assignor cannot encode its metadata on Python
# 3.11 (a client bug: len() of a dict iterator), so it is not exercised.
for name, assignor in (("range", RangePartitionAssignor), ("roundrobin", RoundRobinPartitionAssignor)):
    topic, group = "pg-" + name, "pgroup-" + name
    admin.create_topics([NewTopic(topic, 4, 1)], timeout_ms=10000)
    for i in range(40):
        p.send(topic, value=b"a%d" % i, partition=i % 4)
    p.flush()
    a = Member(group, topic, assignor)
    a.start()
    wait(lambda: a.state() == (40, 4), lambda: "%s: a %s" % (name, a.state()))
    b = Member(group, topic, assignor)
    b.start()
    wait(lambda: a.state()[1] == 2 and b.state()[1] == 2, lambda: "%s: a %s b %s" % (name, a.state(), b.state()))
    for i in range(40):
        p.send(topic, value=b"b%d" % i, partition=i % 4)
    p.flush()
    wait(lambda: len(a.values | b.values) == 80 and b.state()[0] > 0,
         lambda: "%s: a %s b %s" % (name, a.state(), b.state()))
    b.stop = True
    b.join(10)
    wait(lambda: a.state()[1] == 4, lambda: "%s after b left: a %s" % (name, a.state()))
    a.stop = True
    a.join(10)
    g = admin.describe_consumer_groups([group])[0]
    assert g.state == "Empty", g
    offs = admin.list_consumer_group_offsets(group)
    assert sum(o.offset for o in offs.values()) == 80, offs
    print(name, "ok", flush=True)
p.close()
admin.close()
print("OK")
