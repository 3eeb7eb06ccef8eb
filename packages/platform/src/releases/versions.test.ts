import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareVersions, isSemanticVersion, processVersion } from './versions.ts'

test('versions sort by semantic precedence, a pre-release before its release', () => {
  const sorted = ['1.10.0', '1.2.0', '1.2.0-rc.10', '1.2.0-rc.2', '0.9.9', '1.2.0-beta', '2.0.0'].sort(compareVersions)
  assert.deepEqual(sorted, ['0.9.9', '1.2.0-beta', '1.2.0-rc.2', '1.2.0-rc.10', '1.2.0', '1.10.0', '2.0.0'])
  assert.equal(compareVersions('1.2.0', '1.2.0'), 0)
})

test('only semantic versions name builds', () => {
  for (const good of ['0.1.0', '1.2.3', '10.0.0-rc.1']) assert.ok(isSemanticVersion(good), good)
  for (const bad of ['1.2', 'v1.2.0', '01.2.0', '1.2.0+build.5', '../1.2.0', 'latest', '']) {
    assert.equal(isSemanticVersion(bad), false, bad)
  }
})

test("a process's version is its entry in processVersions, else its package's version", () => {
  const reference = { version: '0.1.0', processVersions: { wallet: '1.4.0' } }
  assert.equal(processVersion(reference, 'wallet'), '1.4.0')
  assert.equal(processVersion(reference, 'crm'), '0.1.0')
  assert.throws(() => processVersion({}, 'chat'), /no version for process chat/)
  assert.throws(() => processVersion({ version: '1.0' }, 'chat'), /"1\.0", is not a semantic version/)
})
