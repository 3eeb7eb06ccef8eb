import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { statSync } from 'node:fs'
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, suite, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { build } from 'esbuild'
import { buildAll, embedBuildInfo, parseBuildArgs, ROOT, UsageError } from './build.ts'
import { readCommit } from './processes.ts'

/** Far more than the few pages of a new database before its first checkpoint; the chat migrations write more. */
const CHECKPOINTED_BYTES = 64 * 1024

interface Started {
  port: number
  child: ChildProcess
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/** Runs a process entry with only the given environment and resolves once it logs its listening address. */
/** The environment of a gateway on an ephemeral loopback port with its data in `dir`. */
function gatewayEnv(dir: string): Record<string, string> {
  return {
    Port: '0',
    Host: '127.0.0.1',
    GatewayDB: `sqlite:${join(dir, 'g.db')}`,
    LocalFileStoragePath: join(dir, 'files'),
    LogLevel: 'info',
  }
}

async function startProcess(t: TestContext, entry: string, env: Record<string, string>, cwd: string): Promise<Started> {
  const child = spawn(process.execPath, ['--enable-source-maps', entry], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ServiceSecret: 'build-test-secret-'.padEnd(40, 'x'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const listening = new Promise<number>((resolvePort, reject) => {
    // Generous: a loaded CI machine starts a process slowly; a healthy one listens within a second.
    const timer = setTimeout(() => reject(new Error(`${entry} did not listen within 30 s\n${stderr}`)), 30_000)
    exited.then(([code]) => reject(new Error(`${entry} exited with ${code} before listening\n${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(line)
      if (!match) return
      clearTimeout(timer)
      resolvePort(Number(match[1]))
    })
  })
  return { port: await listening, child, exited }
}

/** Sends SIGTERM and resolves with the exit code and signal. */
async function stopProcess({ child, exited }: Started): Promise<[number | null, NodeJS.Signals | null]> {
  child.kill('SIGTERM')
  return exited
}

interface HealthAnswer {
  status: number
  body: {
    result?: { build: string; service: string; version: string }
    error?: { code: number; message: string }
    id?: string
  }
}

/** GETs a path with a chosen Host header, which fetch refuses to set. */
function getWithHost(port: number, path: string, host: string): Promise<HealthAnswer> {
  return new Promise((resolveAnswer, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end()
  })
}

function assertMisdirected(answer: HealthAnswer, host: string) {
  assert.equal(answer.status, 421, `Host ${host}`)
  assert.equal(answer.body.error?.code, 1007, `Host ${host}`)
  assert.equal(typeof answer.body.error?.message, 'string')
  assert.match(answer.body.error!.message, /not served here/)
  assert.equal(typeof answer.body.id, 'string')
  assert.equal(answer.body.result, undefined)
}

suite('build arguments', () => {
  test('--domain is required', () => {
    assert.throws(
      () => parseBuildArgs([]),
      (error: Error) => {
        assert.ok(error instanceof UsageError)
        assert.match(error.message, /--domain is required/)
        assert.match(error.message, /usage: npm run build -- --domain/)
        return true
      },
    )
  })

  test('implausible domains are refused with the reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['localhost', /development sentinel/],
      ['app.localhost', /development sentinel/],
      ['127.0.0.1', /IP address/],
      ['::1', /IP address/],
      ['[2001:db8::1]', /IP address/],
      ['example.com:8443', /without a port/],
      ['https://example.com', /without a scheme/],
      ['example.com/app', /without a path/],
      ['Example.COM', /lower case \(example\.com\)/],
      ['example', /at least two labels/],
      ['example..com', /label ""/],
      ['example.com.', /label ""/],
      ['-example.com', /label "-example"/],
      ['exa_mple.com', /label "exa_mple"/],
      [`${'a'.repeat(64)}.com`, /1-63/],
      ['example.123', /top-level label cannot be numeric/],
    ]
    for (const [domain, reason] of cases) {
      assert.throws(
        () => parseBuildArgs([`--domain=${domain}`]),
        (error: Error) =>
          error instanceof UsageError && /invalid --domain/.test(error.message) && reason.test(error.message),
        `--domain ${JSON.stringify(domain)}`,
      )
    }
  })

  test('unknown options and stray arguments are refused', () => {
    assert.throws(() => parseBuildArgs(['--domain', 'example.com', '--minify']), UsageError)
    assert.throws(() => parseBuildArgs(['example.com']), UsageError)
    assert.throws(() => parseBuildArgs(['--domain']), UsageError)
    assert.throws(() => parseBuildArgs(['--domain', 'example.com', '--out', '']), /--out must name a directory/)
  })

  test('a plausible domain is accepted, with dist as the default output', () => {
    assert.deepEqual(parseBuildArgs(['--domain', 'example.com'], '/repo'), { domain: 'example.com', out: '/repo/dist' })
    assert.deepEqual(parseBuildArgs(['--domain=chat.example.co.uk', '--out', 'build/x'], '/repo'), {
      domain: 'chat.example.co.uk',
      out: '/repo/build/x',
    })
    assert.equal(parseBuildArgs(['--domain', 'xn--bcher-kva.example']).domain, 'xn--bcher-kva.example')
  })

  test('the command exits 2 with a clear message on a bad domain', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/build.ts'), '--domain', 'localhost'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const [code] = await once(child, 'exit')
    assert.equal(code, 2)
    assert.match(stderr, /^build: invalid --domain: localhost: localhost is a development sentinel/)
  })
})

suite('embedding', () => {
  const modulePath = join(ROOT, 'packages/platform/src/build-info.ts')
  const info = { domain: 'example.test', version: '9.9.9', builtAt: '2026-01-02T03:04:05.000Z' }
  const bundle = (contents: string) =>
    build({
      stdin: { contents, resolveDir: ROOT, loader: 'ts' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      logLevel: 'silent',
      plugins: [embedBuildInfo(info, modulePath)],
    })

  test('the build-info module is replaced by the given values', async () => {
    const result = await bundle(`export { buildInfo } from ${JSON.stringify(modulePath)}`)
    const text = result.outputFiles[0]!.text
    assert.match(text, /"domain": "example\.test"/)
    assert.match(text, /"version": "9\.9\.9"/)
    assert.doesNotMatch(text, /buildInfo = null/)
  })

  test('a bundle that never loads the build-info module fails instead of running as development', async () => {
    await assert.rejects(bundle('export const answer = 42'), /no domain is embedded/)
  })
})

suite('built bundles', () => {
  let dir = ''
  let out = ''
  let built: Awaited<ReturnType<typeof buildAll>>

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'atrium-build-'))
    out = join(dir, 'dist')
    built = await buildAll({
      domain: 'example.test',
      out,
      processes: ['gateway', 'chat'],
      now: new Date('2026-01-02T03:04:05Z'),
    })
  })
  after(() => rm(dir, { recursive: true, force: true }))

  test('each bundle comes with its manifest and a module package.json, in a directory named by its version', async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'packages/gateway/package.json'), 'utf8'))
    assert.deepEqual(built.processes.gateway?.version, version)
    const manifest = JSON.parse(await readFile(join(out, 'gateway', version, 'manifest.json'), 'utf8'))
    const migrations = (await readdir(join(ROOT, 'packages/gateway/src/db/migrations'))).filter((file) =>
      /^\d{4}-/.test(file),
    )
    assert.deepEqual(manifest, {
      process: 'gateway',
      domain: 'example.test',
      version,
      builtAt: '2026-01-02T03:04:05.000Z',
      commit: await readCommit(),
      schema: { setting: 'GatewayDB', migration: migrations.sort().at(-1)!.replace(/\.ts$/, '') },
    })
    assert.match(String(manifest.commit), /^[0-9a-f]{40}$/)
    // The first build of a process becomes its active one.
    assert.equal(await readlink(join(out, 'gateway', 'current')), version)
    assert.equal(built.processes.gateway?.active, true)
    const packageJson = JSON.parse(await readFile(join(out, 'chat', 'current', 'package.json'), 'utf8'))
    assert.equal(packageJson.type, 'module')
    assert.equal(packageJson.private, true)
    assert.match(packageJson.engines.node, /24/)
    const bundle = await readFile(join(out, 'gateway', 'current', 'main.mjs'), 'utf8')
    assert.match(bundle, /\/\/# sourceMappingURL=main\.mjs\.map\s*$/)
    const source = await readFile(join(ROOT, 'packages/platform/src/build-info.ts'), 'utf8')
    assert.match(source, /export const buildInfo: BuildInfo \| null = null/, 'the checkout stays a development build')
  })

  test('the chat client is built into web/chat with assets under /chat/ and its configuration', async () => {
    const index = await readFile(join(out, 'web', 'chat', 'index.html'), 'utf8')
    const script = /<script type="module" crossorigin src="\/chat\/(assets\/index-[\w-]+\.js)">/.exec(index)?.[1]
    assert.ok(script, index)
    const bundle = await readFile(join(out, 'web', 'chat', script), 'utf8')
    assert.match(bundle, /atrium/i)
    // The project domain is embedded: a page opened on it probes p1-p3 of it (api/address-choice.ts).
    assert.ok(/[`"]example\.test[`"]/.test(bundle), 'the client bundle names example.test')
    const config = JSON.parse(await readFile(join(out, 'web', 'chat', 'config.json'), 'utf8'))
    assert.equal(config.mode, 'full')
  })

  test('the built gateway, two workers on one port, serves only its domain, p1-p3 and the sentinels, and stops cleanly', async (t) => {
    // Two workers: the bundle forks itself and the workers share the port (server/workers.ts).
    const gateway = await startProcess(
      t,
      join(out, 'gateway', 'current', 'main.mjs'),
      { ...gatewayEnv(dir), Workers: '2' },
      dir,
    )
    const health = (host: string) => getWithHost(gateway.port, '/auth/v1/health', host)

    const own = await health('example.test')
    assert.equal(own.status, 200)
    assert.equal(own.body.result?.service, 'gateway')
    assert.match(own.body.result!.build, / for example\.test$/)
    for (const host of [
      'p2.example.test',
      'P1.EXAMPLE.TEST:443',
      'p3.example.test:8080',
      'localhost',
      'localhost:8080',
    ]) {
      assert.equal((await health(host)).status, 200, `Host ${host}`)
    }
    for (const host of [
      'evil.test',
      'example.test.evil.test',
      'p4.example.test',
      'xexample.test',
      'a.p1.example.test',
    ]) {
      assertMisdirected(await health(host), host)
    }

    assert.deepEqual(await stopProcess(gateway), [0, null])
  })

  test('the built gateway answers STUN on worker threads from its own worker bundle', async (t) => {
    const env = { ...gatewayEnv(dir), GatewayDB: `sqlite:${join(dir, 'g-stun.db')}`, Stun__Threads: '2' }
    const gateway = await startProcess(t, join(out, 'gateway', 'current', 'main.mjs'), env, dir)
    const client = createSocket('udp4')
    t.after(() => client.close())
    const request = Buffer.from('000100002112a442', 'hex')
    const transactionId = Buffer.from('0123456789abcdef01234567', 'hex')
    // The STUN sockets bind just after the HTTP listener: ask until the answer comes.
    const answer = new Promise<Buffer>((resolveAnswer) => client.once('message', resolveAnswer))
    const asking = setInterval(
      () => client.send(Buffer.concat([request, transactionId]), gateway.port, '127.0.0.1'),
      100,
    )
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('no STUN answer from the built gateway within 10 s')), 10_000).unref(),
    )
    const packet = await Promise.race([answer, timeout]).finally(() => clearInterval(asking))
    assert.equal(packet.readUInt16BE(0), 0x0101, 'a Binding success response')
    assert.deepEqual(packet.subarray(8, 20), transactionId)
    assert.deepEqual(await stopProcess(gateway), [0, null])
  })

  test('a built module bundle embeds the same domain', async (t) => {
    const chat = await startProcess(
      t,
      join(out, 'chat', 'current', 'main.mjs'),
      { Port: '0', Host: '127.0.0.1', ChatDB: `sqlite:${join(dir, 'c.db')}`, LogLevel: 'info' },
      dir,
    )
    const own = await getWithHost(chat.port, '/private/v1/health', 'p1.example.test')
    assert.equal(own.status, 200)
    assert.equal(own.body.result?.service, 'chat')
    assert.equal(own.body.result?.version, built.processes.chat?.version)
    assert.equal(own.body.result!.build, `${built.processes.chat?.version} for example.test`)
    assertMisdirected(await getWithHost(chat.port, '/private/v1/health', 'example.com'), 'example.com')
    // The bundle's own SQLite checkpoint thread copies the migrations' log into the file, which the
    // writing connection never does itself (it would only at 1,000 log pages, or when closing).
    const file = join(dir, 'c.db')
    const deadline = Date.now() + 10_000
    while (statSync(file).size < CHECKPOINTED_BYTES && Date.now() < deadline) await sleep(50)
    assert.ok(statSync(file).size >= CHECKPOINTED_BYTES, `c.db holds ${statSync(file).size} bytes while chat runs`)
    assert.deepEqual(await stopProcess(chat), [0, null])
  })
})

test('an unbuilt checkout runs as a development build that serves only the sentinels', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'atrium-dev-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const gateway = await startProcess(t, resolve(ROOT, 'packages/gateway/src/main.ts'), gatewayEnv(dir), dir)
  const local = await getWithHost(gateway.port, '/auth/v1/health', 'localhost')
  assert.equal(local.status, 200)
  assert.equal(local.body.result?.build, 'development')
  assertMisdirected(await getWithHost(gateway.port, '/auth/v1/health', 'example.test'), 'example.test')
  assert.deepEqual(await stopProcess(gateway), [0, null])
})
