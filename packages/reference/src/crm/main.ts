import { runProcess } from '@atrium/platform'
import { buildCrm } from '../app.ts'
import { loadCrmConfig } from '../config.ts'

runProcess('crm', loadCrmConfig, buildCrm)
