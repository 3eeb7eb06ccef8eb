import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'
import * as eventCursors from './0002-event-cursors.ts'
import * as pushSubscriptions from './0003-push-subscriptions.ts'
import * as webhooks from './0004-webhooks.ts'
import * as sessionHolders from './0005-session-holders.ts'
import * as challengeClients from './0006-challenge-clients.ts'
import * as uploads from './0007-uploads.ts'
import * as userKeys from './0008-user-keys.ts'
import * as webauthn from './0009-webauthn.ts'
import * as federation from './0010-federation.ts'
import * as stunReports from './0015-stun-reports.ts'
import * as mcp from './0016-mcp.ts'
import * as adminActions from './0017-admin-actions.ts'

/** Every gateway database migration, in order. */
export const gatewayMigrations: Migrations = {
  '0001-initial': initial,
  '0002-event-cursors': eventCursors,
  '0003-push-subscriptions': pushSubscriptions,
  '0004-webhooks': webhooks,
  '0005-session-holders': sessionHolders,
  '0006-challenge-clients': challengeClients,
  '0007-uploads': uploads,
  '0008-user-keys': userKeys,
  '0009-webauthn': webauthn,
  '0010-federation': federation,
  '0015-stun-reports': stunReports,
  '0016-mcp': mcp,
  '0017-admin-actions': adminActions,
}
