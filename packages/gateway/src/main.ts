import { runProcess } from '@atrium/platform'
import { buildGateway } from './app.ts'
import { loadGatewayConfig } from './config.ts'

runProcess('gateway', loadGatewayConfig, buildGateway)
