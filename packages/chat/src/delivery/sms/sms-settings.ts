import type { ChatConfig } from '../../config.ts'

/** A provider's name as SmsSender and SmsFailover.Sender spell it. */
export type SmsProviderName = 'twilio' | 'vonage' | 'plivo' | 'sinch' | 'telnyx'

/** One provider's settings: the `Sms` section or the `SmsFailover` section. */
export interface SmsCredentials {
  AccountId: string
  AuthToken: string
  From: string
  ApiBaseUrl: string
  CallbackKey: string
  SignatureMethod: 'md5hash' | 'md5' | 'sha1' | 'sha256' | 'sha512'
}

/** What one provider client needs: its credentials, the callback origin and the timeout. */
export interface SmsProviderSettings extends SmsCredentials {
  name: SmsProviderName
  /** Public origin the status callbacks go to; '' when none are requested. */
  callbackBaseUrl: string
  timeoutMs: number
}

/** The primary provider and the optional failover, or an empty list while SmsSender is empty. */
export function smsProviderSettings(config: ChatConfig): SmsProviderSettings[] {
  const shared = { callbackBaseUrl: config.Sms.CallbackBaseUrl.replace(/\/+$/, ''), timeoutMs: config.Sms.TimeoutMs }
  const list: SmsProviderSettings[] = []
  if (config.SmsSender !== '') list.push({ ...config.Sms, ...shared, name: config.SmsSender as SmsProviderName })
  if (config.SmsSender !== '' && config.SmsFailover.Sender !== '') {
    const { Sender, ...credentials } = config.SmsFailover
    list.push({ ...credentials, ...shared, name: Sender as SmsProviderName })
  }
  return list
}

const ACCOUNT_NAMES: Record<SmsProviderName, string | null> = {
  twilio: 'the Account SID',
  vonage: 'the API key',
  plivo: 'the Auth ID',
  sinch: 'the service plan id',
  telnyx: null,
}

function httpUrlProblem(value: string): string | undefined {
  const url = URL.parse(value)
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return 'must be an http(s) URL'
  if (url.username || url.password) return 'must not carry credentials'
  if (url.search || url.hash) return 'must not have a query or fragment'
  return undefined
}

function credentialProblems(section: string, name: SmsProviderName, settings: SmsCredentials, callbacks: boolean) {
  const problems: string[] = []
  const account = ACCOUNT_NAMES[name]
  if (account && settings.AccountId === '') problems.push(`${section}.AccountId: ${name} needs ${account}`)
  if (settings.AuthToken === '') problems.push(`${section}.AuthToken: ${name} needs its secret`)
  if (settings.From === '') problems.push(`${section}.From: ${name} needs a sender number or id`)
  const base = settings.ApiBaseUrl === '' ? undefined : httpUrlProblem(settings.ApiBaseUrl)
  if (base) problems.push(`${section}.ApiBaseUrl: ${base}`)
  if (callbacks) {
    const key = settings.CallbackKey
    if (name === 'vonage' && key === '')
      problems.push(`${section}.CallbackKey: vonage delivery receipts are checked with the signature secret`)
    if (name === 'telnyx' && Buffer.from(key, 'base64').length !== 32)
      problems.push(`${section}.CallbackKey: telnyx needs the account's Ed25519 public key, base64 (32 bytes)`)
    if (name === 'sinch' && key.length < 32)
      problems.push(`${section}.CallbackKey: sinch callback URLs are signed with a secret of at least 32 characters`)
  }
  return problems
}

/** Every problem of the SMS settings, for the config loader's single error. */
export function smsSettingsProblems(config: ChatConfig): string[] {
  const problems: string[] = []
  const callbacks = config.Sms.CallbackBaseUrl !== ''
  if (callbacks) {
    const problem = httpUrlProblem(config.Sms.CallbackBaseUrl)
    if (problem) problems.push(`Sms.CallbackBaseUrl: ${problem}`)
  }
  if (config.SmsSender !== '')
    problems.push(...credentialProblems('Sms', config.SmsSender as SmsProviderName, config.Sms, callbacks))
  const failover = config.SmsFailover.Sender
  if (failover !== '') {
    if (config.SmsSender === '') problems.push('SmsFailover.Sender: needs SmsSender (the first provider) set')
    else problems.push(...credentialProblems('SmsFailover', failover as SmsProviderName, config.SmsFailover, callbacks))
  }
  return problems
}
