import { runProcess } from '@atrium/platform'
import { buildPayment } from '../app.ts'
import { loadPaymentConfig } from '../config.ts'

runProcess('payment', loadPaymentConfig, buildPayment)
