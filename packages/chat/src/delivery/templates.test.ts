import assert from 'node:assert/strict'
import test from 'node:test'
import { escapeHtml, otpMail, passwordResetMail } from './templates.ts'

test('everything interpolated into the HTML is escaped', () => {
  const mail = passwordResetMail('https://atrium.example/reset?a=1&b="><script>alert(1)</script>')
  assert.ok(!mail.html.includes('<script>'), mail.html)
  assert.ok(mail.html.includes('href="https://atrium.example/reset?a=1&amp;b=&quot;&gt;&lt;script&gt;'), mail.html)
  assert.equal(escapeHtml(`<a href='x'>&</a>`), '&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;')
})

test('the OTP mail names its purpose and carries the code in both bodies but not the subject', () => {
  const mail = otpMail('90210', 'reset-password')
  assert.equal(mail.subject, 'Your password reset code')
  assert.match(mail.text, /^Your password reset code is 90210\n/)
  assert.match(mail.html, />90210</)
  assert.ok(!mail.subject.includes('90210'))
})
