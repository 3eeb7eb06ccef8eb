import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'
import * as profiles from './0002-profiles.ts'
import * as messageEdited from './0003-message-edited.ts'
import * as visibleMessages from './0004-visible-messages.ts'
import * as postgresFunctions from './0005-postgres-functions.ts'
import * as flagStatistics from './0006-flag-statistics.ts'
import * as postSequencedEvents from './0007-post-sequenced-events.ts'
import * as searchIndexMerging from './0008-search-index-merging.ts'
import * as oneReaction from './0009-one-reaction.ts'
import * as fileAttachments from './0010-file-attachments.ts'
import * as knownMembers from './0011-known-members.ts'
import * as supportChats from './0012-support-chats.ts'
import * as smsMessages from './0013-sms-messages.ts'
import * as telegramLinks from './0014-telegram-links.ts'
import * as mailBridge from './0015-mail-bridge.ts'
import * as calls from './0017-calls.ts'
import * as chatAdmin from './0018-chat-admin.ts'
import * as telegramWidgets from './0019-telegram-widgets.ts'
import * as fileDayCounters from './0020-file-day-counters.ts'
import * as sendKeys from './0021-send-keys.ts'
import * as searchIndexQueue from './0022-search-index-queue.ts'
import * as muteEnds from './0023-mute-ends.ts'
import * as telegramNotifyLease from './0024-telegram-notify-lease.ts'

/** Every ChatDB migration, in order. */
export const chatMigrations: Migrations = {
  '0001-initial': initial,
  '0002-profiles': profiles,
  '0003-message-edited': messageEdited,
  '0004-visible-messages': visibleMessages,
  '0005-postgres-functions': postgresFunctions,
  '0006-flag-statistics': flagStatistics,
  '0007-post-sequenced-events': postSequencedEvents,
  '0008-search-index-merging': searchIndexMerging,
  '0009-one-reaction': oneReaction,
  '0010-file-attachments': fileAttachments,
  '0011-known-members': knownMembers,
  '0012-support-chats': supportChats,
  '0013-sms-messages': smsMessages,
  '0014-telegram-links': telegramLinks,
  '0015-mail-bridge': mailBridge,
  '0017-calls': calls,
  '0018-chat-admin': chatAdmin,
  '0019-telegram-widgets': telegramWidgets,
  '0020-file-day-counters': fileDayCounters,
  '0021-send-keys': sendKeys,
  '0022-search-index-queue': searchIndexQueue,
  '0023-mute-ends': muteEnds,
  '0024-telegram-notify-lease': telegramNotifyLease,
}
