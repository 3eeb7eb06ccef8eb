export { buildCrm, buildWallet, type ReferenceOptions } from './app.ts'
export {
  type CrmConfig,
  crmSettings,
  loadCrmConfig,
  loadWalletConfig,
  type WalletConfig,
  walletSettings,
} from './config.ts'
