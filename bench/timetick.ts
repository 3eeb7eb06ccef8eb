/**
 * Timetick generation rate on one core: `npm exec -- node bench/timetick.ts`.
 * Target (issue 2): at least 5 million ids per second.
 */
import { createTimetickGenerator } from '@atrium/platform'

const next = createTimetickGenerator({ node: 1 })
const rounds = 5
const perRound = 10_000_000
let checksum = 0
for (let i = 0; i < 1_000_000; i++) checksum += next() % 7 // warm-up: let the JIT settle

const rates: number[] = []
for (let round = 0; round < rounds; round++) {
  const started = process.hrtime.bigint()
  for (let i = 0; i < perRound; i++) checksum += next() % 7
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  rates.push(perRound / seconds)
}
rates.sort((a, b) => a - b)
const million = (rate: number) => `${(rate / 1e6).toFixed(1)} M/s`
console.log(`node ${process.version}, ${rounds} rounds of ${perRound.toLocaleString('en')} ids (checksum ${checksum})`)
console.log(
  `timetick ids per second: median ${million(rates[Math.floor(rounds / 2)]!)}, min ${million(rates[0]!)}, max ${million(rates.at(-1)!)}`,
)
