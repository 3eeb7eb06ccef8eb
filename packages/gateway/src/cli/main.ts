import { runCli } from './cli.ts'

// The `atrium` command: started by atrium.mjs (which makes sure this runs on Node 24).
process.exitCode = await runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
})
