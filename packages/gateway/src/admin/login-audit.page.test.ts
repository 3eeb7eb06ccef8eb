import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { nextLink, startPanel, tableRows } from '../../test/admin.ts'
import { createLoginAudit } from '../audit/login-audit.repository.ts'

const HOUR = 3_600_000
const START = Date.UTC(2026, 10, 20, 8)

forEachDialect(
  'the login audit filters by user, IP, country, time and result, and pages with a cursor',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    let time = START
    const audit = createLoginAudit(panel.store.db, panel.store.nextTick, () => time)
    const alice = await panel.store.users.create({ name: 'Alice Archer' })
    const attempts: {
      crmId: number
      ip: string
      country: string
      success: boolean
      userAgent: string
      created: number
    }[] = []
    // Twelve attempts an hour apart: users, addresses, countries and results vary on different cycles.
    for (let index = 0; index < 12; index++) {
      time = START + index * HOUR
      const attempt = {
        method: 'email_otp',
        success: index % 3 !== 0,
        reason: index % 3 === 0 ? 'wrong_code' : '',
        crmId: index % 2 === 0 ? alice.crm_id : 0,
        ip: `203.0.113.${index % 4}`,
        country: index % 5 === 0 ? 'DE' : 'FR',
        userAgent: `Browser ${index}`,
      }
      attempts.push({ ...attempt, created: time })
      await audit.record(attempt)
    }
    const newestFirst = [...attempts].reverse()
    const shown = async (query: string) => {
      const answer = await panel.page(`/ProxyAdmin/LoginAudit?${query}`, panel.operator)
      assert.equal(answer.status, 200, query)
      return tableRows(answer.html).map((row) => /Browser (\d+)/.exec(row)![1])
    }
    const expected = (keep: (attempt: (typeof attempts)[number]) => boolean) =>
      newestFirst.filter(keep).map((attempt) => attempt.userAgent.split(' ')[1])

    assert.deepEqual(
      await shown(`User=${alice.crm_id}`),
      expected((a) => a.crmId === alice.crm_id),
    )
    assert.deepEqual(
      await shown('Ip=203.0.113.1'),
      expected((a) => a.ip === '203.0.113.1'),
    )
    assert.deepEqual(
      await shown('Country=de'),
      expected((a) => a.country === 'DE'),
    )
    assert.deepEqual(
      await shown('Result=failure'),
      expected((a) => !a.success),
    )
    assert.deepEqual(
      await shown(`Result=success&User=${alice.crm_id}&Country=FR`),
      expected((a) => a.success && a.crmId === alice.crm_id && a.country === 'FR'),
    )
    // From inclusive, To exclusive, as UTC datetime-local values.
    const from = new Date(START + 3 * HOUR).toISOString().slice(0, 16)
    const to = new Date(START + 7 * HOUR).toISOString().slice(0, 16)
    assert.deepEqual(
      await shown(`From=${from}&To=${to}`),
      expected((a) => a.created >= START + 3 * HOUR && a.created < START + 7 * HOUR),
    )

    const first = await panel.page('/ProxyAdmin/LoginAudit?Result=success&Limit=5', panel.operator)
    const pages = [tableRows(first.html)]
    let next = nextLink(first.html)
    while (next) {
      const answer = await panel.page(next, panel.operator)
      pages.push(tableRows(answer.html))
      next = nextLink(answer.html)
    }
    assert.deepEqual(
      pages.map((rows) => rows.length),
      [5, 3],
    )
    assert.deepEqual(
      pages.flat().map((row) => /Browser (\d+)/.exec(row)![1]),
      expected((a) => a.success),
    )
    // Names, not bare ids, and the reason of a refusal.
    const page = await panel.page(`/ProxyAdmin/LoginAudit?User=${alice.crm_id}&Result=failure&Limit=1`, panel.operator)
    assert.match(
      tableRows(page.html)[0]!,
      new RegExp(`Alice Archer \\(${alice.crm_id}\\) email_otp refused: wrong_code`),
    )
  },
)
