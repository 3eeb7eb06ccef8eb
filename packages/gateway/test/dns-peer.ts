import { createSocket } from 'node:dgram'
import type { TestContext } from 'node:test'

/** What the peer answers for one name: TXT records (each a list of strings), or a failure code. */
export type DnsAnswer = string[][] | 'servfail' | 'silent'

const TYPE_TXT = 16
const CLASS_IN = 1

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  let at = offset
  for (let length = message[at]!; length !== 0; length = message[at]!) {
    labels.push(message.subarray(at + 1, at + 1 + length).toString('latin1'))
    at += 1 + length
  }
  return { name: labels.join('.'), end: at + 1 }
}

function txtRecord(strings: string[]): Buffer {
  return Buffer.concat(
    strings.map((text) => {
      const bytes = Buffer.from(text)
      return Buffer.concat([Buffer.from([bytes.length]), bytes])
    }),
  )
}

/**
 * A tiny authoritative DNS server on a loopback UDP port: TXT queries for names in `zone` get
 * their records, other types of a known name get an empty answer (NODATA), unknown names get
 * NXDOMAIN. `servfail` answers SERVFAIL and `silent` never answers. Names are matched in lower case.
 */
export async function startDnsPeer(t: TestContext, zone: Map<string, DnsAnswer>) {
  const socket = createSocket('udp4')
  const queries: string[] = []
  socket.on('message', (message, remote) => {
    if (message.length < 12) return
    const { name, end } = readName(message, 12)
    const type = message.readUInt16BE(end)
    queries.push(name)
    const answer = zone.get(name.toLowerCase())
    if (answer === 'silent') return
    const question = message.subarray(12, end + 4)
    const header = Buffer.alloc(12)
    message.copy(header, 0, 0, 2)
    const rcode = answer === undefined ? 3 : answer === 'servfail' ? 2 : 0
    const records = Array.isArray(answer) && type === TYPE_TXT ? answer : []
    // QR, opcode 0, AA, RD copied from the query; RA; rcode.
    header.writeUInt16BE(0x8400 | (message.readUInt16BE(2) & 0x0100) | 0x0080 | rcode, 2)
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(records.length, 6)
    const answers = records.map((strings) => {
      const data = txtRecord(strings)
      const fixed = Buffer.alloc(12)
      fixed.writeUInt16BE(0xc00c, 0) // pointer to the question's name
      fixed.writeUInt16BE(TYPE_TXT, 2)
      fixed.writeUInt16BE(CLASS_IN, 4)
      fixed.writeUInt32BE(60, 6)
      fixed.writeUInt16BE(data.length, 10)
      return Buffer.concat([fixed, data])
    })
    socket.send(Buffer.concat([header, question, ...answers]), remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => socket.close(() => resolve())))
  return { server: `127.0.0.1:${socket.address().port}`, queries }
}
