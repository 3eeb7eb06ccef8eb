import { runProcess } from '@atrium/platform'
import { buildWallet } from '../app.ts'
import { loadWalletConfig } from '../config.ts'

runProcess('wallet', loadWalletConfig, buildWallet)
