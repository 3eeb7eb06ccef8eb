import { runGateway } from './server/workers.ts'

runGateway()
