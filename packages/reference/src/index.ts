export { buildCrm, buildPayment, buildWallet, type ReferenceOptions } from './app.ts'
export {
  type CrmConfig,
  crmSettings,
  loadCrmConfig,
  loadPaymentConfig,
  loadWalletConfig,
  type PaymentConfig,
  paymentSettings,
  type WalletConfig,
  walletSettings,
} from './config.ts'
