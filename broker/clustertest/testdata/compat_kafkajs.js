// KafkaJS against a Samsa cluster; run by TestCompatKafkaJS
// (compat_kafkajs_test.go) as
//   node compat_kafkajs.js <bootstrap> <replication factor>
// with NODE_PATH naming a node_modules that holds kafkajs. Consumers wait at
// most 500 ms per fetch: a KafkaJS member heartbeats (and so learns of a
// rebalance) only between fetches, 5 s apart by default. KafkaJS is a
// client of its own (no librdkafka, no Java): its admin client, idempotent
// and transactional producers (sendOffsets), a consumer group of two
// members with a rebalance, read_committed reads, offsets admin. Every
// check throws on failure; the script prints "OK" last when all passed.
'use strict'
const assert = require('assert')
const { Kafka, logLevel, CompressionTypes } = require('kafkajs')

const brokers = process.argv[2].split(',')
const rf = parseInt(process.argv[3], 10)
const deadline = Date.now() + 50000
const kafka = new Kafka({ clientId: 'samsa-compat', brokers, logLevel: logLevel.WARN, retry: { retries: 8 } })

const started = Date.now()
const step = (name) => console.log('step', name, '(' + ((Date.now() - started) / 1000).toFixed(1) + ' s)')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
async function waitFor (what, cond) {
  for (;;) {
    const v = await cond()
    if (v) return v
    assert(Date.now() < deadline, 'timed out waiting for ' + what)
    await sleep(50)
  }
}

// readAll consumes topic from the beginning with a fresh group until want
// messages came, then returns their values.
async function readAll (topic, want, opts) {
  const c = kafka.consumer(Object.assign({ groupId: 'kjs-read-' + topic + '-' + Date.now(), maxWaitTimeInMs: 500 }, opts))
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  const got = []
  await c.run({ eachMessage: async ({ message }) => { got.push(message.value.toString()) } })
  await waitFor(want + ' messages of ' + topic + ' (have ' + got.length + ')', () => got.length >= want)
  await sleep(500) // nothing beyond want may come
  await c.disconnect()
  return got
}

async function main () {
  step('admin create topics')
  const admin = kafka.admin()
  await admin.connect()
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: 'kjs-a', numPartitions: 3, replicationFactor: rf },
      { topic: 'kjs-txn', numPartitions: 2, replicationFactor: rf },
      { topic: 'kjs-src', numPartitions: 1, replicationFactor: rf, configEntries: [{ name: 'retention.ms', value: '3600000' }] }
    ]
  })
  assert.strictEqual(created, true)
  assert.strictEqual(await admin.createTopics({ topics: [{ topic: 'kjs-a', numPartitions: 3 }] }), false)
  const md = await admin.fetchTopicMetadata({ topics: ['kjs-a'] })
  assert.strictEqual(md.topics[0].partitions.length, 3)
  const cl = await admin.describeCluster()
  assert(cl.controller !== null && cl.brokers.length >= 1, JSON.stringify(cl))

  step('admin configs and partitions')
  const dc = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: 'kjs-src' }] })
  const ret = dc.resources[0].configEntries.find((e) => e.configName === 'retention.ms')
  assert.strictEqual(ret.configValue, '3600000')
  await admin.createPartitions({ topicPartitions: [{ topic: 'kjs-src', count: 2 }] })
  await waitFor('2 partitions', async () => (await admin.fetchTopicMetadata({ topics: ['kjs-src'] })).topics[0].partitions.length === 2)

  step('idempotent producer, acks=all, gzip')
  const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await p.connect()
  for (let b = 0; b < 10; b++) {
    const messages = []
    for (let i = 0; i < 100; i++) messages.push({ key: 'k' + (i % 7), value: 'v' + (b * 100 + i), partition: i % 3, headers: { h: 'x' } })
    const res = await p.send({ topic: 'kjs-a', acks: -1, compression: CompressionTypes.GZIP, messages })
    assert(res.every((r) => r.errorCode === 0), JSON.stringify(res))
  }
  await p.disconnect()
  const offs = await admin.fetchTopicOffsets('kjs-a')
  assert.strictEqual(offs.reduce((s, o) => s + parseInt(o.high, 10), 0), 1000, JSON.stringify(offs))
  const a = await readAll('kjs-a', 1000)
  assert.strictEqual(new Set(a).size, 1000)

  step('transactions: commit and abort')
  const tp = kafka.producer({ transactionalId: 'kjs-tx-1', maxInFlightRequests: 1, idempotent: true })
  await tp.connect()
  let tx = await tp.transaction()
  await tx.send({ topic: 'kjs-txn', messages: [0, 1, 2, 3].map((i) => ({ value: 'c1-' + i, partition: i % 2 })) })
  await tx.commit()
  tx = await tp.transaction()
  await tx.send({ topic: 'kjs-txn', messages: [0, 1, 2, 3].map((i) => ({ value: 'a1-' + i, partition: i % 2 })) })
  await tx.abort()
  tx = await tp.transaction()
  await tx.send({ topic: 'kjs-txn', messages: [0, 1, 2, 3].map((i) => ({ value: 'c2-' + i, partition: i % 2 })) })
  await tx.commit()
  const rc = await readAll('kjs-txn', 8, { readUncommitted: false })
  assert.deepStrictEqual(rc.slice().sort(), ['c1-0', 'c1-1', 'c1-2', 'c1-3', 'c2-0', 'c2-1', 'c2-2', 'c2-3'])
  const ru = await readAll('kjs-txn', 12, { readUncommitted: true })
  assert.strictEqual(ru.filter((v) => v.startsWith('a1-')).length, 4)

  step('consume-transform-produce with sendOffsets')
  const src = kafka.producer()
  await src.connect()
  await src.send({ topic: 'kjs-src', acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ value: 'in-' + i, partition: 0 })) })
  await src.disconnect()
  const cons = kafka.consumer({ groupId: 'kjs-ctp', readUncommitted: false, maxWaitTimeInMs: 500 })
  await cons.connect()
  await cons.subscribe({ topic: 'kjs-src', fromBeginning: true })
  let moved = 0
  await cons.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      const t = await tp.transaction()
      await t.send({ topic: 'kjs-txn', messages: batch.messages.map((m) => ({ value: 'out-' + m.value.toString(), partition: 0 })) })
      const next = (BigInt(batch.lastOffset()) + 1n).toString()
      await t.sendOffsets({ consumerGroupId: 'kjs-ctp', topics: [{ topic: 'kjs-src', partitions: [{ partition: batch.partition, offset: next }] }] })
      await t.commit()
      moved += batch.messages.length
    }
  })
  await waitFor('20 records moved (have ' + moved + ')', () => moved >= 20)
  await cons.disconnect()
  await tp.disconnect()
  const fo = await admin.fetchOffsets({ groupId: 'kjs-ctp', topics: ['kjs-src'] })
  const p0 = fo[0].partitions.find((x) => x.partition === 0)
  assert.strictEqual(p0.offset, '20', JSON.stringify(fo))
  const out = await readAll('kjs-txn', 28, { readUncommitted: false })
  assert.strictEqual(out.filter((v) => v.startsWith('out-in-')).length, 20)

  step('consumer group of two members')
  const gp = kafka.producer()
  await gp.connect()
  await gp.send({ topic: 'kjs-a', messages: Array.from({ length: 30 }, (_, i) => ({ value: 'g-' + i, partition: i % 3 })) })
  await gp.disconnect()
  const seen = new Map()
  const members = []
  for (let m = 0; m < 2; m++) {
    const c = kafka.consumer({ groupId: 'kjs-group', sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 500 })
    await c.connect()
    await c.subscribe({ topic: 'kjs-a', fromBeginning: true })
    await c.run({ eachMessage: async ({ partition, message }) => { seen.set(partition + '/' + message.offset, m) } })
    members.push(c)
  }
  await waitFor('1030 records in the group (have ' + seen.size + ')', () => seen.size >= 1030)
  const desc = await waitFor('two members, stable', async () => {
    const d = await admin.describeGroups(['kjs-group'])
    const g = d.groups[0]
    return g.state === 'Stable' && g.members.length === 2 ? g : null
  })
  assert.strictEqual(desc.protocolType, 'consumer')
  await members[0].disconnect()
  await waitFor('one member left', async () => {
    const g = (await admin.describeGroups(['kjs-group'])).groups[0]
    return g.state === 'Stable' && g.members.length === 1
  })
  await members[1].disconnect()
  const gofs = await admin.fetchOffsets({ groupId: 'kjs-group', topics: ['kjs-a'] })
  const total = gofs[0].partitions.reduce((s, x) => s + parseInt(x.offset, 10), 0)
  assert.strictEqual(total, 1030, JSON.stringify(gofs))
  const groups = await admin.listGroups()
  assert(groups.groups.some((g) => g.groupId === 'kjs-group'), JSON.stringify(groups))

  step('admin reset offsets and delete')
  await admin.setOffsets({ groupId: 'kjs-group', topic: 'kjs-a', partitions: [{ partition: 0, offset: '5' }] })
  const after = await admin.fetchOffsets({ groupId: 'kjs-group', topics: ['kjs-a'] })
  assert.strictEqual(after[0].partitions.find((x) => x.partition === 0).offset, '5')
  await admin.deleteGroups(['kjs-group'])
  await admin.deleteTopics({ topics: ['kjs-src'] })
  await waitFor('kjs-src deleted', async () => !(await admin.listTopics()).includes('kjs-src'))
  await admin.disconnect()
  console.log('OK')
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
