import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import type { ComponentChildren } from 'preact'
import { ADMIN_CSP, adminHref, adminTime, filterForm, html, liveRefresh, renderAdminPage } from './admin-page.ts'

const page = (body: ComponentChildren, extra: Partial<Parameters<typeof renderAdminPage>[0]> = {}) =>
  renderAdminPage({
    panel: 'Atrium gateway',
    title: 'Routes',
    nav: [
      { href: '/ProxyAdmin/', label: 'Dashboard' },
      { href: '/ProxyAdmin/Routes', label: 'Routes' },
    ],
    current: '/ProxyAdmin/Routes',
    body,
    ...extra,
  })

test('values are escaped: a hostile name stays text', () => {
  const name = '<script>alert(1)</script>"onmouseover="x'
  const out = page(html`<p title=${name}>${name}</p>`)
  assert.ok(!out.includes('<script>'))
  assert.ok(out.includes('&lt;script>alert(1)&lt;/script>'))
  assert.ok(out.includes('title="&lt;script>alert(1)&lt;/script>&quot;onmouseover=&quot;x"'))
})

test('the one stylesheet is allowed by its hash and nothing else runs', () => {
  const out = page(html`<p>x</p>`)
  const style = /<style>([\s\S]*?)<\/style>/.exec(out)?.[1] ?? ''
  const hash = createHash('sha256').update(style).digest('base64')
  assert.ok(ADMIN_CSP.includes(`'sha256-${hash}'`))
  assert.match(ADMIN_CSP, /default-src 'none'/)
  assert.ok(!out.includes('<script'))
  assert.ok(out.startsWith('<!doctype html>'))
})

test('the current section is marked; a notice is optional', () => {
  const out = page('', { notice: { text: 'Route /msg/ saved.' } })
  assert.match(out, /<a href="\/ProxyAdmin\/Routes" aria-current="page">Routes<\/a>/)
  assert.match(out, /<a href="\/ProxyAdmin\/">Dashboard<\/a>/)
  assert.match(out, /role="status">Route \/msg\/ saved\.</)
  assert.ok(!page('').includes('http-equiv'))
})

test('a live page refreshes only once the operator turns it on, and offers to stop', () => {
  const query = { User: '42', Live: undefined }
  const off = page('', { live: liveRefresh('/ProxyAdmin/StunMonitor', query, 15) })
  assert.ok(!off.includes('http-equiv'))
  assert.match(off, /<a href="\/ProxyAdmin\/StunMonitor\?User=42&amp;Live=1">Refresh every 15 seconds<\/a>/)
  const on = page('', { live: liveRefresh('/ProxyAdmin/StunMonitor', { ...query, Live: '1' }, 15) })
  assert.match(on, /<meta http-equiv="refresh" content="15"/)
  assert.match(on, /Refreshes every 15 seconds\. <a href="\/ProxyAdmin\/StunMonitor\?User=42">Stop refreshing<\/a>/)
})

test('hrefs leave out empty filters; times are UTC', () => {
  assert.equal(adminHref('/x', { a: '1', b: '', c: undefined, d: false, e: 'a b&c' }), '/x?a=1&e=a+b%26c')
  assert.equal(adminHref('/x', {}), '/x')
  assert.equal(adminTime(Date.UTC(2026, 10, 26, 4, 31, 7)), '2026-11-26 04:31:07 UTC')
  assert.equal(adminTime(0), '')
})

test('a filter form keeps its values and labels every field', () => {
  const out = page(
    filterForm('/ChatAdmin/UserFiles', [
      { name: 'FileName', label: 'File name', value: 'rep"ort' },
      {
        name: 'FileType',
        label: 'Type',
        value: 'doc',
        options: [
          ['', 'any'],
          ['doc', 'doc'],
        ],
      },
      { name: 'ShowDeleted', label: 'Show deleted', value: 'true', type: 'checkbox' },
    ]),
  )
  assert.match(out, /<label for="filter-FileName">File name/)
  assert.match(out, /value="rep&quot;ort"/)
  assert.match(out, /<option value="doc" selected>doc<\/option>/)
  assert.match(out, /name="ShowDeleted" value="true" checked/)
})
