import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { screenshot } from './system.ts'

/** axe-core's browser bundle, injected into each page that is checked. */
const AXE_SOURCE: string = createRequire(import.meta.url)('axe-core').source

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[]; failureSummary?: string }[]
}

/** Impacts that fail a check; moderate and minor findings are reported by axe but not enforced. */
const FAILING = new Set(['serious', 'critical'])

/**
 * Runs axe-core (WCAG 2.x A and AA rules, and its best practices) on the page as it is now, saves
 * a screenshot as test-results/web/<name>.png, and fails with every serious or critical finding:
 * its rule, its help text and the elements it found.
 */
export async function checkAccessibility(page: Page, name: string): Promise<void> {
  await screenshot(page, name)
  // Evaluated through the debugging protocol, not added as a <script>: the client's CSP runs no inline script.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<unknown> } }).axe
    const results = (await axe.run(document, { resultTypes: ['violations'] })) as { violations: unknown[] }
    return results.violations
  })
  const failing = (violations as AxeViolation[]).filter((violation) => FAILING.has(violation.impact ?? ''))
  const report = failing.map(
    (violation) =>
      `${violation.impact} ${violation.id}: ${violation.help}\n` +
      violation.nodes.map((node) => `    ${node.target.join(' ')} — ${node.failureSummary ?? ''}`).join('\n'),
  )
  assert.deepEqual(report, [], `${name}: axe found serious or critical problems`)
}
