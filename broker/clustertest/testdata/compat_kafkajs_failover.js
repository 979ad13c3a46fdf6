// KafkaJS across a leader failover; run by TestCompatKafkaJSFailover as
//   node compat_kafkajs_failover.js <bootstrap> <topic> <n>
// (NODE_PATH naming a node_modules with kafkajs). An idempotent producer
// (acks=all, one request in flight) sends n records to partition 0, one per
// request at a steady pace, while the test kills the leader; then a consumer
// reads the partition back: every record exactly once, in order. Prints
// "OK" last.
'use strict'
const assert = require('assert')
const { Kafka, logLevel } = require('kafkajs')

const [brokers, topic, n] = [process.argv[2].split(','), process.argv[3], parseInt(process.argv[4], 10)]
const deadline = Date.now() + 40000
const kafka = new Kafka({ clientId: 'kjs-failover', brokers, logLevel: logLevel.NOTHING, requestTimeout: 5000,
  retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main () {
  const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, metadataMaxAge: 1000 })
  await p.connect()
  for (let i = 0; i < n; i++) {
    await p.send({ topic, acks: -1, messages: [{ value: String(i), partition: 0 }] })
    if (i % 20 === 0) console.log('sent', i)
    await sleep(10) // pacing, so that the failover happens mid-stream
  }
  await p.disconnect()
  console.log('produced', n)
  const c = kafka.consumer({ groupId: 'kjs-failover-read', maxWaitTimeInMs: 500 })
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  const order = []
  await c.run({ eachMessage: async ({ message }) => { order.push(parseInt(message.value.toString(), 10)) } })
  while (order.length < n) {
    assert(Date.now() < deadline, 'consumed ' + order.length + ' of ' + n)
    await sleep(50)
  }
  await sleep(500) // nothing beyond n may come
  await c.disconnect()
  assert.deepStrictEqual(order, Array.from({ length: n }, (_, i) => i), 'records duplicated, lost or out of order')
  console.log('OK')
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
