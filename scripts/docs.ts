/**
 * Generates the reference docs that mirror code: docs/errors.md from the error table and
 * docs/configuration.md from each process's settings declaration. `npm run docs` writes them;
 * scripts/docs.test.ts fails when the committed files are out of date.
 */
import { writeFileSync } from 'node:fs'
import { chatSettings } from '@atrium/chat'
import { gatewaySettings } from '@atrium/gateway'
import { describeSettings, renderErrorTable } from '@atrium/platform'
import { crmSettings, paymentSettings, walletSettings } from '@atrium/reference'
import type { TObject } from 'typebox'

const processes: [string, string, TObject][] = [
  ['gateway', 'The only internet-facing process: sign-in, sessions, proxy, events, files.', gatewaySettings],
  ['chat', 'The chat module, internal only, behind the gateway.', chatSettings],
  ['wallet', 'Reference wallet module (contracts the gateway touches only).', walletSettings],
  ['crm', 'Reference CRM module (contracts the gateway touches only).', crmSettings],
  ['payment', 'Reference payment module: payment orders with a tariff per flow (docs/payment.md).', paymentSettings],
]

function cell(value: unknown): string {
  const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)
  return text.replaceAll('|', '\\|')
}

/** Renders docs/configuration.md. */
export function renderConfigurationReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    'Each process validates its settings at start and refuses to start with a list of every problem.',
    'Settings come from, in increasing priority:',
    '',
    '1. the defaults below;',
    '2. the JSON file named by the `ATRIUM_CONFIG` environment variable, one section per process:',
    '   `{"gateway": {"Port": 8080, "WebPush": {"Enabled": false}}, "chat": {"ChatDB": "postgres://…"}}`;',
    '3. environment variables named like the setting with `__` between levels (`WebPush__Enabled=true`).',
    '',
    'Booleans accept `true/false/1/0/yes/no/on/off`; lists and maps in the environment are JSON.',
    'Database connection strings are `sqlite:<path>` (relative to the working directory) or',
    '`postgres://user@host:port/database`, optionally with `?schema=<name>` to use a PostgreSQL schema and',
    '`pool_max=<n>` (1–1000, default 10) for the most connections the process keeps to it.',
    '',
    '<!-- Generated from each packages/*/src/config.ts by `npm run docs`; do not edit by hand. -->',
  ]
  for (const [name, summary, schema] of processes) {
    lines.push(
      '',
      `## ${name}`,
      '',
      summary,
      '',
      '| setting | environment | type | default | meaning |',
      '|---|---|---|---|---|',
    )
    for (const setting of describeSettings(schema)) {
      lines.push(
        `| \`${setting.name}\` | \`${setting.env}\` | ${cell(setting.type)} | ${setting.default === '' ? '(empty)' : `\`${cell(setting.default)}\``} | ${cell(setting.description)} |`,
      )
    }
  }
  return `${lines.join('\n')}\n`
}

/** Every generated document, by path relative to the repository root. */
export function generatedDocs(): Record<string, string> {
  return { 'docs/errors.md': renderErrorTable(), 'docs/configuration.md': renderConfigurationReference() }
}

if (import.meta.main) {
  const root = new URL('../', import.meta.url)
  for (const [path, text] of Object.entries(generatedDocs())) {
    writeFileSync(new URL(path, root), text)
    console.log(`wrote ${path}`)
  }
}
