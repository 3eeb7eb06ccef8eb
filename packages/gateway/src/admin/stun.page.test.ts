import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { startPanel, tableRows } from '../../test/admin.ts'
import { stunClient } from '../../test/stun.ts'
import { signedInUser } from '../../test/support.ts'

forEachDialect(
  'the STUN monitor shows the responder’s counters and the clients’ reports, with an empty state before',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const [bound] = await panel.app.stun.listening()
    assert.ok(bound)

    const empty = await panel.page('/ProxyAdmin/StunMonitor', panel.operator)
    assert.equal(empty.status, 200)
    assert.ok(!empty.html.includes('http-equiv'), 'no refresh until the operator turns it on')
    assert.match(empty.html, /<a href="\/ProxyAdmin\/StunMonitor\?Live=1">Refresh every 10 seconds<\/a>/)
    const live = await panel.page('/ProxyAdmin/StunMonitor?Live=1', panel.operator)
    assert.match(live.html, /<meta http-equiv="refresh" content="10"\/>/)
    assert.match(empty.html, /No client has reported its ICE gathering yet/)
    assert.match(empty.html, new RegExp(`Listening</div><div class="label">[^<]*UDP ${bound.port}`))
    assert.match(empty.html, /<div class="value">0<\/div><div class="label">Binding requests answered/)

    const client = await stunClient(t, bound)
    const answered = 2
    for (let index = 0; index < answered; index++) await client.exchange()
    const caller = await signedInUser(panel)
    await panel.store.users.setName(caller.crmId, 'Cal Caller')
    const report = {
      candidates: [
        { type: 'host', protocol: 'udp', address: '192.168.1.5', port: 50000 },
        { type: 'srflx', protocol: 'udp', address: '198.51.100.9', port: 61000 },
        { type: 'srflx', protocol: 'udp', address: '198.51.100.9', port: 61001 },
      ],
      mappedAddress: { address: '198.51.100.9', port: 61000 },
      gatheringMs: 412,
      stunRttMs: 37,
      errors: [{ url: 'stun:stun.example:3478', code: 701, text: 'no answer' }],
    }
    const posted = await fetch(`${panel.url}/auth/v1/stun/report`, {
      method: 'POST',
      headers: caller.headers,
      body: JSON.stringify(report),
    })
    assert.equal(posted.status, 200)

    const page = await panel.page('/ProxyAdmin/StunMonitor', panel.operator)
    assert.match(
      page.html,
      new RegExp(`<div class="value">${answered}</div><div class="label">Binding requests answered`),
    )
    const rows = tableRows(page.html)
    assert.equal(rows.length, 1)
    assert.match(
      rows[0]!,
      new RegExp(
        `Cal Caller \\(${caller.crmId}\\) 127\\.0\\.0\\.1 198\\.51\\.100\\.9:61000 1 host, 2 srflx 412 ms 37 ms 701 no answer$`,
      ),
    )
    const other = await panel.page(`/ProxyAdmin/StunMonitor?User=${panel.operator.crmId}`, panel.operator)
    assert.match(other.html, /No client has reported/)
  },
)
