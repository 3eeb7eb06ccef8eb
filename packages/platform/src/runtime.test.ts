import assert from 'node:assert/strict'
import { test } from 'node:test'

// ARCHITECTURE.md "Known pitfalls": without the `node` package's install script, npm scripts fall
// back to the machine's older Node, where a bare test run can pass without running anything.
test('tests run on the pinned Node.js 24', () => {
  assert.equal(process.versions.node.split('.')[0], '24')
})

test('node:sqlite is available with FTS5', async () => {
  const { DatabaseSync } = await import('node:sqlite')
  const db = new DatabaseSync(':memory:')
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'trigram')")
  db.prepare('INSERT INTO docs (body) VALUES (?)').run('Atrium gateway')
  assert.equal(db.prepare("SELECT count(*) AS n FROM docs WHERE docs MATCH 'atewa'").get()?.n, 1)
  db.close()
})
